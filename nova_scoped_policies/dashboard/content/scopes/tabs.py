from django.utils.translation import gettext_lazy as _
from horizon import tabs


class HeatmapTab(tabs.Tab):
    """Members per domain (rows) and group (columns)."""

    name = _('Occupancy')
    slug = 'occupancy'
    template_name = 'scoped_policies/scopes/_heatmap.html'

    def get_context_data(self, request):
        heatmap = self.tab_group.kwargs['heatmap']
        return {'heatmap': heatmap, 'rows': heatmap.rows()}


class DomainsTab(tabs.Tab):
    name = _('Domains')
    slug = 'domains'
    template_name = 'scoped_policies/scopes/_domains.html'

    def get_context_data(self, request):
        return {'scope': self.tab_group.kwargs['heatmap'].scope}


class ScopeTabs(tabs.DetailTabsGroup):
    slug = 'scope_details'
    tabs = (HeatmapTab, DomainsTab)
