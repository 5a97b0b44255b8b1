from django.urls import re_path

from nova_scoped_policies.dashboard.content.groups import views

GROUP = r'^(?P<group_id>[^/]+)/'

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^create/$', views.CreateView.as_view(), name='create'),
    re_path(GROUP + r'$', views.DetailView.as_view(), name='detail'),
    re_path(GROUP + r'update/$', views.UpdateView.as_view(), name='update'),
    re_path(GROUP + r'member/$', views.MemberView.as_view(), name='member'),
    re_path(GROUP + r'repair/$', views.RepairView.as_view(), name='repair'),
]
