from django.utils.translation import gettext_lazy as _
from horizon import tabs

from nova_scoped_policies.dashboard.content.stacks import tables


class ServersTab(tabs.TableTab):
    name = _('Servers')
    slug = 'servers'
    table_classes = (tables.ServersTable,)
    template_name = 'horizon/common/_detail_table.html'

    def get_servers_data(self):
        return list(self.tab_group.kwargs['stack'].servers)


class AuditTab(tabs.TableTab):
    name = _('Audit')
    slug = 'audit'
    table_classes = (tables.PoliciesTable,)
    template_name = 'horizon/common/_detail_table.html'

    def get_policies_data(self):
        audit = self.tab_group.kwargs['audit']
        return list(audit.policies) if audit else []


class StackTabs(tabs.DetailTabsGroup):
    slug = 'stack_details'
    tabs = (ServersTab, AuditTab)
