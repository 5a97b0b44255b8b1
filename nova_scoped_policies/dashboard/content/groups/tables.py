from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from horizon import tables

from nova_scoped_policies.api.policies import groups as rules
from nova_scoped_policies.api.policies import repairs as repair_rules
from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard import policy


def _lines(values):
    return ', '.join(values) or '-'


def _rules(group):
    return ', '.join(f'{k}={v}' for k, v in sorted(group.rules.items())) \
        or '-'


class SetPolicy(policy.Allowed, tables.LinkAction):
    rule = rules.CREATE
    name = 'create'
    verbose_name = _('Set policy')
    url = 'horizon:project:scoped_groups:create'
    classes = ('ajax-modal',)
    icon = 'plus'


class EditPolicy(policy.Allowed, tables.LinkAction):
    rule = rules.UPDATE
    name = 'update'
    verbose_name = _('Edit policy')
    url = 'horizon:project:scoped_groups:update'
    classes = ('ajax-modal',)
    icon = 'pencil'


class Members(policy.Allowed, tables.LinkAction):
    rule = rules.ADD_INSTANCE
    name = 'member'
    verbose_name = _('Add or remove a member')
    url = 'horizon:project:scoped_groups:member'
    classes = ('ajax-modal',)


class PlanRepair(policy.Allowed, tables.LinkAction):
    rule = repair_rules.PLAN
    name = 'repair'
    verbose_name = _('Plan a repair')
    url = 'horizon:project:scoped_groups:repair'


class DropPolicy(policy.Allowed, tables.DeleteAction):
    rule = rules.DELETE
    help_text = _('The server group stays in Nova; its scoped policies '
                  'are dropped.')

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Drop scoped policy', 'Drop scoped policies',
                             count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Dropped scoped policy',
                             'Dropped scoped policies', count)

    def delete(self, request, obj_id):
        policy.call(api.group_delete, request, obj_id)


class GroupsTable(tables.DataTable):
    name = tables.Column(
        lambda row: row.group.name or row.group.id, verbose_name=_('Name'),
        link=lambda row: reverse('horizon:project:scoped_groups:detail',
                                 args=[row.id]))
    policies = tables.Column(lambda row: _lines(row.group.policies),
                             verbose_name=_('Policies'))
    rules = tables.Column(lambda row: _rules(row.group),
                          verbose_name=_('Rules'))
    members = tables.Column(lambda row: len(row.group.members),
                            verbose_name=_('Members'))
    status = tables.Column('status', verbose_name=_('Audit'),
                           status=True, status_choices=(
                               ('ok', True), ('violated', False),
                               ('unknown', None)))

    class Meta:
        name = 'groups'
        verbose_name = _('Scoped policies')
        table_actions = (SetPolicy, DropPolicy)
        row_actions = (EditPolicy, Members, PlanRepair, DropPolicy)


class MembersTable(tables.DataTable):
    instance = tables.Column('instance_id', verbose_name=_('Instance'))
    placements = tables.Column(
        lambda m: ', '.join(f'{s}: {d or "-"}'
                            for s, d in sorted(m.placements.items())) or '-',
        verbose_name=_('Where (per scope)'))

    def get_object_id(self, datum):
        return datum.instance_id

    class Meta:
        name = 'members'
        verbose_name = _('Members')
