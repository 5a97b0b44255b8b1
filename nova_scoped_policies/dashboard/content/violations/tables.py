from django.http import QueryDict
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import tables

from nova_scoped_policies.api.policies import repairs as rules
from nova_scoped_policies.dashboard import policy


class PlanRepair(policy.Allowed, tables.LinkAction):
    rule = rules.PLAN
    name = 'repair'
    verbose_name = _('Plan a repair')

    def get_link_url(self, datum):
        query = QueryDict(mutable=True)
        query.update({'kind': datum.kind, 'id': datum.target_id})
        return (reverse('horizon:admin:scoped_repairs:plan') + '?'
                + query.urlencode())


class ViolationsTable(tables.DataTable):
    kind = tables.Column(lambda v: v.kind.replace('_', ' '),
                         verbose_name=_('Kind'))
    target = tables.Column('target_id', verbose_name=_('Id'))
    name = tables.Column('name', verbose_name=_('Name'), empty_value='-')
    project = tables.Column('project_id', verbose_name=_('Project'))
    text = tables.Column('text', verbose_name=_('Violation'))

    class Meta:
        name = 'violations'
        verbose_name = _('Violations')
        row_actions = (PlanRepair,)
