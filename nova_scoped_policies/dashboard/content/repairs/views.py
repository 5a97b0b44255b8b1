"""Repair plans (admins): plan a group, a stack or everything, then
apply the plan as one repair task of the policy API, whose progress the
page reads about once a second: each move shows as it runs and ends."""

import json
import typing

from django import http
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views import generic
from horizon import exceptions
from horizon import tables
from horizon.utils import memoized

from nova_scoped_policies.api.policies import repairs as repair_rules
from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard import policy
from nova_scoped_policies.dashboard.content.repairs import forms as r_forms
from nova_scoped_policies.dashboard.content.repairs import tables as r_tables

INDEX_URL = 'horizon:admin:scoped_repairs:index'
MOST_BODY = 64 * 1024
LABELS = {
    'planned': _('planned'), 'moving': _('moving'), 'done': _('done'),
    'failed': _('failed'), 'starting': _('Starting the repair task...'),
    'cancelling': _('cancelling after the moves running now'),
    'applied': _('Applied'), 'stopped': _('Stopped'),
    'refused': _('Refused'),
    'lost': _('Unable to follow the repair task (it may still run)')}
"""What the plan page's script says of a repair and its moves."""


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
            policy.handle(self.request, _('Unable to plan a repair.'),
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
        context['apply_labels'] = LABELS
        context['can_apply'] = policy.allowed(self.request,
                                              repair_rules.APPLY)
        return context


class ApplyView(generic.View):
    """``POST`` a plan (JSON: kind, id, fingerprint, moves): starts the
    policy API's repair task for all its moves and answers 202 with the
    task (:func:`task_json`) and the URL of its progress (:class:`TaskView`),
    which the page reads about once a second."""

    http_method_names = ['post']

    def post(self, request):
        if len(request.body) > MOST_BODY:
            return _refused(413, 'body: larger than 64 KiB')
        try:
            data = json.loads(request.body)
            target = api.Target.of(data['kind'], data.get('id'))
            moves = _moves(data['moves'])
            fingerprint = str(data['fingerprint'])
        except (ValueError, KeyError, TypeError) as exc:
            return _refused(400, f'body: {exc}')
        try:
            task = api.repair_apply(request, target, fingerprint, moves)
        except api.APIError as exc:
            return _refused(exc.status, exc.detail)
        return http.JsonResponse(
            {'task': task_json(task), 'url': _task_url(task.id)},
            status=202)


class TaskView(generic.View):
    """A repair task: ``GET`` its progress (:func:`task_json`),
    ``DELETE`` cancels it (202; it stops after the moves running now)."""

    http_method_names = ['get', 'delete']

    def get(self, request, task_id):
        try:
            return http.JsonResponse(
                {'task': task_json(api.repair_task(request, task_id))})
        except api.APIError as exc:
            return _refused(exc.status, exc.detail)

    def delete(self, request, task_id):
        try:
            task = api.repair_task_cancel(request, task_id)
        except api.APIError as exc:
            return _refused(exc.status, exc.detail)
        return http.JsonResponse({'task': task_json(task)}, status=202)


def _moves(body) -> typing.List[api.Move]:
    """The moves of an apply's body.

    :raises ValueError: naming the move that is not one.
    """
    if not isinstance(body, list) or not body:
        raise ValueError('moves: a list of at least one move')
    found = []
    for i, move in enumerate(body):
        try:
            found.append(api.Move.of(move))
        except (KeyError, TypeError):
            raise ValueError(f'moves[{i}]: an object with server, from '
                             'and to')
    return found


def _task_url(task_id: str) -> str:
    return reverse('horizon:admin:scoped_repairs:task', args=[task_id])


def task_json(task: api.Task) -> dict:
    """What the plan page shows of a task: the servers done and moving,
    the one that failed and why; ``running``; ``applied`` (ended with
    every move done); otherwise, once ended, ``why`` it stopped."""
    failed = None
    if task.failed is not None:
        failed = {'server': task.failed.move.server if task.failed.move
                  else None, 'reason': task.failed.reason}
    return {'id': task.id, 'status': task.status, 'running': task.running,
            'applied': task.applied, 'moves': len(task.moves),
            'done': [m.server for m in task.done],
            'current': [m.server for m in task.current],
            'failed': failed, 'cancel_requested': task.cancel_requested,
            'why': '' if task.running or task.applied else _why(task)}


def _why(task: api.Task) -> str:
    """Why an ended task did not apply every move."""
    if task.failed is not None:
        return task.failed.reason
    again = {'done': len(task.done), 'moves': len(task.moves)}
    if task.status == api.TASK_CANCELLED:
        return str(_('cancelled after %(done)s of %(moves)s moves: plan '
                     'again to finish the work') % again)
    if task.status == api.TASK_INTERRUPTED:
        return str(_('interrupted after %(done)s of %(moves)s moves (the '
                     'policy API process carrying it out stopped): plan '
                     'again to finish the work') % again)
    return str(_('%(status)s after %(done)s of %(moves)s moves')
               % dict(again, status=task.status))


def _refused(status: int, detail: str) -> http.JsonResponse:
    return http.JsonResponse({'status': 'refused', 'detail': detail[:500]},
                             status=status)
