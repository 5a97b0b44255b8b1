from django.urls import re_path

from nova_scoped_policies.dashboard.content.repairs import views

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^plan/$', views.PlanView.as_view(), name='plan'),
    re_path(r'^apply/$', views.ApplyView.as_view(), name='apply'),
    re_path(r'^tasks/(?P<task_id>[0-9a-fA-F-]{36})/$',
            views.TaskView.as_view(), name='task'),
]
