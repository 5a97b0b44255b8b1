from django.urls import re_path

from nova_scoped_policies.dashboard.content.violations import views

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
]
