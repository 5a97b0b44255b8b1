from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from horizon import tables

from nova_scoped_policies.api.policies import stacks as rules
from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard import policy

STATUSES = (('reserved', None), ('live', True), ('confirmed', True),
            ('expired', False))


class ReleaseStack(policy.Allowed, tables.DeleteAction):
    rule = rules.DELETE
    help_text = _('What is still held is released and the decision is '
                  'forgotten; booted servers stay.')

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Release decision', 'Release decisions', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Released decision', 'Released decisions',
                             count)

    def delete(self, request, obj_id):
        policy.call(api.stack_delete, request, obj_id)


class StacksTable(tables.DataTable):
    name = tables.Column(
        lambda row: row.stack.name or row.stack.id, verbose_name=_('Name'),
        link=lambda row: reverse('horizon:project:scoped_stacks:detail',
                                 args=[row.id]))
    status = tables.Column(lambda row: row.stack.status,
                           verbose_name=_('Status'), status=True,
                           status_choices=STATUSES)
    lease = tables.Column(lambda row: row.stack.expires_at or '-',
                          verbose_name=_('Lease until'))
    servers = tables.Column(lambda row: len(row.stack.servers),
                            verbose_name=_('Servers'))
    audit = tables.Column('audit', verbose_name=_('Audit'))

    class Meta:
        name = 'stacks'
        verbose_name = _('Stacks')
        table_actions = (ReleaseStack,)
        row_actions = (ReleaseStack,)


class ServersTable(tables.DataTable):
    name = tables.Column('name', verbose_name=_('Server'))
    host = tables.Column('host', verbose_name=_('Host'), empty_value='-')
    state = tables.Column('state', verbose_name=_('State'))
    instance = tables.Column('instance_uuid', verbose_name=_('Instance'),
                             empty_value='-')

    class Meta:
        name = 'servers'
        verbose_name = _('Servers')


class PoliciesTable(tables.DataTable):
    field = tables.Column('field', verbose_name=_('Document'))
    kind = tables.Column('kind', verbose_name=_('Kind'))
    policies = tables.Column(lambda p: ', '.join(p.policies),
                             verbose_name=_('Policies'))
    status = tables.Column('status', verbose_name=_('Status'))
    violations = tables.Column(lambda p: '; '.join(p.violations) or '-',
                               verbose_name=_('Violations'))

    class Meta:
        name = 'policies'
        verbose_name = _('Audit')
