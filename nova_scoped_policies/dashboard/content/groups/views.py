"""The project's scoped policies: the list with each group's audit, a
group's page (chart per domain, members, violations), the forms, and a
repair plan in the tenant's identifiers."""

import dataclasses
import typing

from django.urls import reverse
from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy as _
from horizon import forms
from horizon import tables
from horizon import tabs
from horizon.utils import memoized

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard import policy
from nova_scoped_policies.dashboard.content import charts
from nova_scoped_policies.dashboard.content.groups import forms as g_forms
from nova_scoped_policies.dashboard.content.groups import tables as g_tables
from nova_scoped_policies.dashboard.content.groups import tabs as g_tabs
from nova_scoped_policies.dashboard.content.repairs import tables as r_tables

INDEX_URL = 'horizon:project:scoped_groups:index'


@dataclasses.dataclass(frozen=True)
class Row:
    """A group of the list with its audit's verdict."""

    group: api.Group
    status: str

    @property
    def id(self) -> str:
        return self.group.id

    @property
    def name(self) -> str:
        return self.group.name or self.group.id

    @property
    def project_id(self) -> str:
        return self.group.project_id


class IndexView(tables.DataTableView):
    table_class = g_tables.GroupsTable
    template_name = 'scoped_policies/table.html'
    page_title = _('Scoped policies')

    def get_data(self):
        try:
            groups = api.group_list(self.request)
        except Exception:
            policy.handle(self.request,
                          _('Unable to list the scoped policies.'))
            return []
        rows = []
        for group in groups:
            try:
                status = api.group_audit(self.request, group.id).status
            except api.APIError:
                status = 'unknown'
            rows.append(Row(group, status))
        return rows


def scope_charts(request, group: api.Group, audit: api.Audit
                 ) -> typing.List[charts.Chart]:
    """A chart per scope of the group: members per domain, with the
    scope's other domains (those the tenant may see) at zero."""
    found = []
    # the scopes the audit places members in; those the group names
    # while no member runs anywhere
    for scope in audit.scopes or group.scopes:
        counts = audit.per_domain(scope)
        known: typing.Sequence[str] = ()
        if scope != 'host':
            try:
                known = api.scope_get(request, scope).aggregates
            except api.APIError:
                known = ()
        found.append(charts.Chart.of(scope, counts, known))
    return found


class DetailView(tabs.TabView):
    tab_group_class = g_tabs.GroupTabs
    template_name = 'scoped_policies/detail.html'
    page_title = '{{ group.name|default:group.id }}'

    @memoized.memoized_method
    def get_data(self):
        group_id = self.kwargs['group_id']
        try:
            group = api.group_get(self.request, group_id)
            audit = api.group_audit(self.request, group_id)
        except Exception:
            policy.handle(self.request,
                          _('Unable to show server group %s.')
                          % group_id,
                          redirect=reverse(INDEX_URL))
        return group, audit, scope_charts(self.request, group, audit)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        group, audit, _charts = self.get_data()
        context['group'] = group
        context['audit'] = audit
        context['url'] = reverse(INDEX_URL)
        table = g_tables.GroupsTable(self.request)
        context['actions'] = table.render_row_actions(
            Row(group, audit.status))
        return context

    def get_tabs(self, request, *args, **kwargs):
        group, audit, found = self.get_data()
        return self.tab_group_class(request, group=group, audit=audit,
                                    charts=found, **kwargs)


class CreateView(forms.ModalFormView):
    form_class = g_forms.PolicyForm
    template_name = 'scoped_policies/form.html'
    modal_id = 'set_policy_modal'
    form_id = 'set_policy_form'
    modal_header = _('Set scoped policy')
    page_title = _('Set scoped policy')
    submit_label = _('Set policy')
    submit_url = reverse_lazy('horizon:project:scoped_groups:create')
    success_url = reverse_lazy(INDEX_URL)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['form_help'] = _(
            'Give a Nova server group policies scoped to a rack, a zone or '
            'any scope of this cloud, and rules such as '
            'max_server_per_rack. Domains are named by your own '
            'identifiers, as the scopes list them.')
        return context


class UpdateView(CreateView):
    modal_id = 'edit_policy_modal'
    form_id = 'edit_policy_form'
    modal_header = _('Edit scoped policy')
    page_title = _('Edit scoped policy')
    submit_label = _('Save')

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['submit_url'] = reverse(
            'horizon:project:scoped_groups:update',
            args=[self.kwargs['group_id']])
        return context

    def get_initial(self):
        try:
            group = api.group_get(self.request, self.kwargs['group_id'])
        except Exception:
            policy.handle(self.request, _('Unable to read the group.'),
                          redirect=reverse(INDEX_URL))
        return {'existing': True, 'group_id': group.id, 'name': group.name,
                'policies': '\n'.join(group.policies),
                'rules': g_forms.rules_text(group.rules)}


class MemberView(forms.ModalFormView):
    form_class = g_forms.MemberForm
    template_name = 'scoped_policies/form.html'
    modal_id = 'member_modal'
    form_id = 'member_form'
    modal_header = _('Add or remove a member')
    page_title = _('Add or remove a member')
    submit_label = _('Submit')

    def get_success_url(self):
        return reverse('horizon:project:scoped_groups:detail',
                       args=[self.kwargs['group_id']])

    def get_cancel_url(self):
        return self.get_success_url()

    def get_initial(self):
        return {'group_id': self.kwargs['group_id'], 'action': 'add'}

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['submit_url'] = reverse(
            'horizon:project:scoped_groups:member',
            args=[self.kwargs['group_id']])
        context['form_help'] = _(
            'An instance added here counts for the group\'s policies '
            'without being moved: if it breaks them, the audit says so.')
        return context


class RepairView(tables.DataTableView):
    """A repair plan of the group: the moves, in the tenant's
    identifiers (carrying it out is the operators')."""

    table_class = r_tables.MovesTable
    template_name = 'scoped_policies/groups/repair.html'
    page_title = _('Repair plan')

    @memoized.memoized_method
    def plan(self) -> typing.Optional[api.Plan]:
        try:
            return api.repair_plan(self.request, api.Target(
                'server_group', self.kwargs['group_id']))
        except Exception:
            policy.handle(self.request, _('Unable to plan a repair.'))
            return None

    def get_data(self):
        plan = self.plan()
        return list(plan.moves) if plan else []

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['plan'] = self.plan()
        context['group_id'] = self.kwargs['group_id']
        return context
