import dataclasses

from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import tables
from horizon import tabs
from horizon.utils import memoized

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard import policy
from nova_scoped_policies.dashboard.content.stacks import tables as s_tables
from nova_scoped_policies.dashboard.content.stacks import tabs as s_tabs

INDEX_URL = 'horizon:project:scoped_stacks:index'
AUDITED = ('reserved', 'live')
"""Statuses whose servers are somewhere (held or booted)."""


@dataclasses.dataclass(frozen=True)
class Row:
    stack: api.Stack
    audit: str

    @property
    def id(self) -> str:
        return self.stack.id

    @property
    def name(self) -> str:
        return self.stack.name or self.stack.id

    @property
    def project_id(self) -> str:
        return self.stack.project_id


def _audit(request, stack: api.Stack) -> str:
    if stack.status not in AUDITED:
        return '-'
    try:
        return api.stack_audit(request, stack.id).status
    except api.APIError as exc:
        return f'unknown ({exc.status})'


class IndexView(tables.DataTableView):
    table_class = s_tables.StacksTable
    template_name = 'scoped_policies/table.html'
    page_title = _('Stacks')

    def get_data(self):
        try:
            stacks = api.stack_list(self.request)
        except Exception:
            policy.handle(self.request, _('Unable to list the stacks.'))
            return []
        return [Row(s, _audit(self.request, s)) for s in stacks]


class DetailView(tabs.TabView):
    tab_group_class = s_tabs.StackTabs
    template_name = 'scoped_policies/detail.html'
    page_title = '{{ stack.name|default:stack.id }}'

    @memoized.memoized_method
    def get_data(self):
        stack_id = self.kwargs['stack_id']
        try:
            stack = api.stack_get(self.request, stack_id)
        except Exception:
            policy.handle(self.request, _('Unable to show stack %s.')
                          % stack_id, redirect=reverse(INDEX_URL))
        audit = None
        if stack.status in AUDITED:
            try:
                audit = api.stack_audit(self.request, stack_id)
            except api.APIError as exc:
                exceptions.handle(self.request, exc.detail)
        return stack, audit

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        stack, audit = self.get_data()
        context['stack'] = stack
        context['audit'] = audit
        context['url'] = reverse(INDEX_URL)
        return context

    def get_tabs(self, request, *args, **kwargs):
        stack, audit = self.get_data()
        return self.tab_group_class(request, stack=stack, audit=audit,
                                    **kwargs)
