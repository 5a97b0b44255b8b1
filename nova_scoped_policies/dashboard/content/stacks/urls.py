from django.urls import re_path

from nova_scoped_policies.dashboard.content.stacks import views

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^(?P<stack_id>[^/]+)/$', views.DetailView.as_view(),
            name='detail'),
]
