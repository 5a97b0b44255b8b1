"""Repair plans (admins): plan a group, a stack or everything, then
apply the plan one move per request, each shown as it completes."""

import json

from django import http
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views import generic
from horizon import exceptions
from horizon import tables
from horizon.utils import memoized

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard.content.repairs import forms as r_forms
from nova_scoped_policies.dashboard.content.repairs import tables as r_tables

INDEX_URL = 'horizon:admin:scoped_repairs:index'
MOST_BODY = 64 * 1024


class IndexView(generic.FormView):
    """Choose what to repair."""

    form_class = r_forms.PlanForm
    template_name = 'scoped_policies/repairs/index.html'

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['page_title'] = _('Repair plans')
        return context

    def form_valid(self, form):
        data = form.cleaned_data
        query = http.QueryDict(mutable=True)
        query['kind'] = data['kind']
        if data['kind'] != 'all':
            query['id'] = data['id'].strip()
        return http.HttpResponseRedirect(
            reverse('horizon:admin:scoped_repairs:plan') + '?'
            + query.urlencode())


class PlanView(tables.DataTableView):
    """A plan, in real host names, with Apply."""

    table_class = r_tables.ApplyMovesTable
    template_name = 'scoped_policies/repairs/plan.html'
    page_title = _('Repair plan')

    @memoized.memoized_method
    def plan(self):
        try:
            target = api.Target.of(self.request.GET.get('kind', 'all'),
                                   self.request.GET.get('id'))
        except ValueError as exc:
            exceptions.handle(self.request, str(exc),
                              redirect=reverse(INDEX_URL))
        try:
            return api.repair_plan(self.request, target)
        except Exception:
            exceptions.handle(self.request, _('Unable to plan a repair.'),
                              redirect=reverse(INDEX_URL))

    def get_data(self):
        return list(self.plan().moves)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        plan = self.plan()
        context['plan'] = plan
        context['apply'] = {
            'url': reverse('horizon:admin:scoped_repairs:apply'),
            'kind': plan.target.kind, 'id': plan.target.id,
            'fingerprint': plan.fingerprint,
            'moves': [m.body() for m in plan.moves]}
        return context


class ApplyView(generic.View):
    """``POST`` one move of a plan (JSON: kind, id, fingerprint, move);
    answers what the policy API did, with the fingerprint for the next
    move. The page calls it once per move, so each shows as it ends."""

    http_method_names = ['post']

    def post(self, request):
        if len(request.body) > MOST_BODY:
            return _refused(413, 'body: larger than 64 KiB')
        try:
            data = json.loads(request.body)
            target = api.Target.of(data['kind'], data.get('id'))
            move = api.Move.of(data['move'])
            fingerprint = str(data['fingerprint'])
        except (ValueError, KeyError, TypeError) as exc:
            return _refused(400, f'body: {exc}')
        try:
            done = api.repair_apply(request, target, fingerprint, [move])
        except api.APIError as exc:
            return _refused(exc.status, exc.detail)
        return http.JsonResponse({
            'status': done.status,
            'done': [m.body() for m in done.done],
            'failed': done.failed,
            'violations': list(done.violations),
            'fingerprint': done.fingerprint})


def _refused(status: int, detail: str) -> http.JsonResponse:
    return http.JsonResponse({'status': 'refused', 'detail': detail[:500]},
                             status=status)
