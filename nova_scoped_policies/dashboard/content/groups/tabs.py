from django.utils.translation import gettext_lazy as _
from horizon import tabs

from nova_scoped_policies.api.policies import repairs as repair_rules
from nova_scoped_policies.dashboard.content.groups import tables
from nova_scoped_policies.dashboard import policy


class OverviewTab(tabs.Tab):
    """The policies, and a chart of the members per domain of each scope
    they use."""

    name = _('Overview')
    slug = 'overview'
    template_name = 'scoped_policies/groups/_overview.html'

    def get_context_data(self, request):
        return {'group': self.tab_group.kwargs['group'],
                'audit': self.tab_group.kwargs['audit'],
                'charts': self.tab_group.kwargs['charts']}


class MembersTab(tabs.TableTab):
    name = _('Members')
    slug = 'members'
    table_classes = (tables.MembersTable,)
    template_name = 'horizon/common/_detail_table.html'

    def get_members_data(self):
        audit = self.tab_group.kwargs['audit']
        return list(audit.members) if audit else []


class ViolationsTab(tabs.Tab):
    name = _('Violations')
    slug = 'violations'
    template_name = 'scoped_policies/groups/_violations.html'

    def get_context_data(self, request):
        group = self.tab_group.kwargs['group']
        return {'group': group, 'audit': self.tab_group.kwargs['audit'],
                'can_plan': policy.allowed(request, repair_rules.PLAN,
                                           group.project_id)}


class GroupTabs(tabs.DetailTabsGroup):
    slug = 'group_details'
    tabs = (OverviewTab, MembersTab, ViolationsTab)
