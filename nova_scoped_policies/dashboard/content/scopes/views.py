from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import tables
from horizon import tabs
from horizon.utils import memoized

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard import policy
from nova_scoped_policies.dashboard.content.scopes import tables as s_tables
from nova_scoped_policies.dashboard.content.scopes import tabs as s_tabs

INDEX_URL = 'horizon:admin:scoped_scopes:index'


class IndexView(tables.DataTableView):
    table_class = s_tables.ScopesTable
    template_name = 'scoped_policies/table.html'
    page_title = _('Scopes')

    def get_data(self):
        try:
            return api.scope_list(self.request)
        except Exception:
            policy.handle(self.request, _('Unable to list the scopes.'))
            return []


class DetailView(tabs.TabView):
    tab_group_class = s_tabs.ScopeTabs
    template_name = 'scoped_policies/detail.html'
    page_title = _('Scope {{ heatmap.scope.name }}')

    @memoized.memoized_method
    def heatmap(self):
        try:
            return api.heatmap(self.request, self.kwargs['scope'])
        except Exception:
            policy.handle(self.request, _('Unable to read scope %s.')
                          % self.kwargs['scope'],
                          redirect=reverse(INDEX_URL))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['heatmap'] = self.heatmap()
        context['url'] = reverse(INDEX_URL)
        return context

    def get_tabs(self, request, *args, **kwargs):
        return self.tab_group_class(request, heatmap=self.heatmap(),
                                    **kwargs)
