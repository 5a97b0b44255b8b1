from django.utils.translation import gettext_lazy as _
from horizon import tables

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard import policy
from nova_scoped_policies.dashboard.content.violations import tables as v_t


class IndexView(tables.DataTableView):
    table_class = v_t.ViolationsTable
    template_name = 'scoped_policies/table.html'
    page_title = _('Violations')

    def get_data(self):
        try:
            return api.violations(self.request)
        except Exception:
            policy.handle(self.request,
                          _('Unable to audit the groups and stacks.'))
            return []
