"""The admin panels: scopes with the heatmap, every violation, repair
plans, their apply as one repair task and its progress (API wrapper
mocked)."""

import json
from unittest import mock

from django.urls import reverse

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard.tests import data
from nova_scoped_policies.dashboard.tests import helpers

API = 'nova_scoped_policies.dashboard.api.scoped_policies.'
PLAN = reverse('horizon:admin:scoped_repairs:plan')
APPLY = reverse('horizon:admin:scoped_repairs:apply')
TASK_URL = reverse('horizon:admin:scoped_repairs:task', args=[data.TASK])


class HeatmapTest(helpers.AdminTestCase):

    @mock.patch(API + 'group_audit')
    @mock.patch(API + 'group_list')
    @mock.patch(API + 'scope_get')
    def test_members_per_domain_and_group(self, scope_get, group_list,
                                          group_audit):
        other = data.group(id='00000000-0000-4000-8000-000000000002',
                           name='web', policy={'name': 'anti-affinity:zone',
                                               'rules': {}})
        scope_get.return_value = data.scope()
        group_list.return_value = [data.group(), other]
        group_audit.return_value = data.audit()
        res = self.client.get(reverse('horizon:admin:scoped_scopes:detail',
                                      args=['rack']))
        heatmap = res.context['heatmap']
        # only the group whose policies use the scope
        self.assertEqual([data.GROUP], [g.id for g in heatmap.groups])
        group_list.assert_called_once_with(mock.ANY, all_projects=True)
        self.assertEqual(2, heatmap.counts[(data.RACK_1, data.GROUP)])
        self.assertContains(res, f'data-group="{data.GROUP}" '
                                 'data-count="2"')
        self.assertContains(res, 'rgba(217,83,79,1.00)')
        # every domain of the scope is a row
        for rack in (data.RACK_1, data.RACK_2, data.RACK_3):
            self.assertContains(res, f'<tr data-domain="{rack}">')

    @mock.patch(API + 'scope_list')
    def test_the_scopes(self, scope_list):
        scope_list.return_value = [data.scope()]
        res = self.client.get(reverse('horizon:admin:scoped_scopes:index'))
        self.assertContains(res, 'obfuscated')
        self.assertEqual(3, len(res.context['table'].data[0].aggregates))


class ViolationsTest(helpers.AdminTestCase):

    @mock.patch(API + 'stack_list')
    @mock.patch(API + 'group_audit')
    @mock.patch(API + 'group_list')
    def test_every_violation_with_plan_a_repair(self, group_list, audit,
                                                stack_list):
        group_list.return_value = [data.group()]
        audit.return_value = data.audit()
        stack_list.return_value = []
        res = self.client.get(reverse('horizon:admin:scoped_violations:'
                                      'index'))
        (found,) = res.context['table'].data
        self.assertEqual(('server_group', data.GROUP),
                         (found.kind, found.target_id))
        self.assertContains(res, f'{PLAN}?kind=server_group&amp;id='
                                 f'{data.GROUP}')


class RepairsTest(helpers.AdminTestCase):

    @mock.patch(API + 'repair_plan')
    def test_a_plan_with_apply(self, plan):
        plan.return_value = data.plan()
        res = self.client.get(PLAN, {'kind': 'server_group',
                                     'id': data.GROUP})
        plan.assert_called_once_with(mock.ANY, api.Target('server_group',
                                                          data.GROUP))
        self.assertContains(res, 'id="nsp-apply"')
        self.assertContains(res, 'id="nsp-apply-labels"')
        self.assertEqual({'url': APPLY, 'kind': 'server_group',
                          'id': data.GROUP, 'fingerprint': 'f1',
                          'moves': [{'server': data.I2, 'from': 'h-a',
                                     'to': 'h-b'}]},
                         res.context['apply'])

    def test_the_form_leads_to_the_plan(self):
        res = self.client.post(reverse('horizon:admin:scoped_repairs:index'),
                               {'kind': 'all', 'id': ''})
        self.assertRedirectsNoFollow(res, f'{PLAN}?kind=all')
        res = self.client.post(reverse('horizon:admin:scoped_repairs:index'),
                               {'kind': 'stack', 'id': ''})
        self.assertIn('id', res.context['form'].errors)

    @mock.patch(API + 'repair_apply')
    def test_apply_starts_one_task_for_every_move(self, apply):
        apply.return_value = data.task()
        res = self.client.post(APPLY, json.dumps({
            'kind': 'server_group', 'id': data.GROUP, 'fingerprint': 'f1',
            'moves': [data.MOVE_1, data.MOVE_2]}),
            content_type='application/json')
        self.assertEqual(202, res.status_code)
        self.assertEqual(TASK_URL, res.json()['url'])
        self.assertEqual({'id': data.TASK, 'status': 'running',
                          'running': True, 'applied': False, 'moves': 2,
                          'done': [], 'current': [data.I1], 'failed': None,
                          'cancel_requested': False, 'why': ''},
                         res.json()['task'])
        apply.assert_called_once_with(
            mock.ANY, api.Target('server_group', data.GROUP), 'f1',
            [api.Move.of(data.MOVE_1), api.Move.of(data.MOVE_2)])

    @mock.patch(API + 'repair_apply')
    def test_an_outdated_or_busy_plan_is_refused_with_the_api_detail(
            self, apply):
        for detail in ('the plan no longer fits the cloud (...); nothing '
                       'was moved: plan again',
                       f'server {data.I2} is moved by the running repair '
                       f'task {data.TASK}; nothing was moved: wait for it, '
                       'or cancel it'):
            apply.side_effect = api.APIError('POST', '/repairs/apply', 409,
                                             [detail])
            res = self.client.post(APPLY, json.dumps({
                'kind': 'all', 'fingerprint': 'f1',
                'moves': [data.MOVE_2]}), content_type='application/json')
            self.assertEqual(409, res.status_code)
            self.assertEqual(detail, res.json()['detail'])

    @mock.patch(API + 'repair_apply')
    def test_the_api_detail_is_bounded(self, apply):
        apply.side_effect = api.APIError('POST', '/repairs/apply', 400,
                                         ['moves[0].server: ' + 'x' * 5000])
        res = self.client.post(APPLY, json.dumps({
            'kind': 'all', 'fingerprint': 'f1', 'moves': [data.MOVE_2]}),
            content_type='application/json')
        self.assertEqual(400, res.status_code)
        self.assertEqual(500, len(res.json()['detail']))
        self.assertTrue(res.json()['detail'].startswith('moves[0].server'))

    def test_a_bad_body_is_400_naming_what(self):
        for body, field in (({'kind': 'moon'}, 'kind'),
                            ({'kind': 'all', 'fingerprint': 'f1',
                              'moves': []}, 'moves'),
                            ({'kind': 'all', 'fingerprint': 'f1',
                              'moves': [data.MOVE_1, {'server': data.I2}]},
                             'moves[1]'),
                            ({'kind': 'all', 'fingerprint': 'f1',
                              'moves': ['h-b']}, 'moves[0]'),
                            ({'kind': 'all', 'moves': [data.MOVE_2]},
                             'fingerprint')):
            res = self.client.post(APPLY, json.dumps(body),
                                   content_type='application/json')
            self.assertEqual(400, res.status_code, body)
            self.assertIn(field, res.json()['detail'])
        res = self.client.post(APPLY, b'{' + b' ' * (65 * 1024) + b'}',
                               content_type='application/json')
        self.assertEqual(413, res.status_code)


class RepairTaskTest(helpers.AdminTestCase):
    """The task's progress as the plan page reads it, per status."""

    @mock.patch(API + 'repair_task')
    def test_progress_per_status(self, get):
        failure = {'move': data.MOVE_2, 'reason': 'No valid host was found',
                   'host': 'h-a'}
        table = [
            # (the API's task, what the page is told)
            (dict(done=[data.MOVE_1], current=[data.MOVE_2]),
             {'running': True, 'applied': False, 'done': [data.I1],
              'current': [data.I2], 'failed': None, 'why': ''}),
            (dict(status='applied', done=[data.MOVE_1, data.MOVE_2],
                  current=[], finished_at='2026-11-25T23:01:00Z'),
             {'running': False, 'applied': True,
              'done': [data.I1, data.I2], 'current': [], 'failed': None,
              'why': ''}),
            (dict(status='stopped', done=[data.MOVE_1], current=[],
                  failed=failure),
             {'running': False, 'applied': False, 'done': [data.I1],
              'current': [], 'why': 'No valid host was found',
              'failed': {'server': data.I2,
                         'reason': 'No valid host was found'}}),
            (dict(status='stopped', current=[], failed=dict(
                failure, move=None, reason='the service failed')),
             {'running': False, 'applied': False, 'done': [],
              'current': [], 'why': 'the service failed',
              'failed': {'server': None, 'reason': 'the service failed'}}),
            (dict(status='cancelled', done=[data.MOVE_1], current=[],
                  cancel_requested=True),
             {'running': False, 'applied': False, 'done': [data.I1],
              'current': [], 'failed': None,
              'why': 'cancelled after 1 of 2 moves: plan again to finish '
                     'the work'}),
            (dict(status='interrupted', current=[]),
             {'running': False, 'applied': False, 'done': [],
              'current': [], 'failed': None,
              'why': 'interrupted after 0 of 2 moves (the policy API '
                     'process carrying it out stopped): plan again to '
                     'finish the work'}),
        ]
        for given, shown in table:
            get.reset_mock()
            get.return_value = data.task(**given)
            res = self.client.get(TASK_URL)
            self.assertEqual(200, res.status_code, given)
            found = res.json()['task']
            self.assertEqual(shown, {k: found[k] for k in shown}, given)
            self.assertEqual(2, found['moves'])
            get.assert_called_once_with(mock.ANY, data.TASK)

    @mock.patch(API + 'repair_task')
    def test_a_task_the_api_does_not_know_is_its_404(self, get):
        get.side_effect = api.APIError('GET', f'/repairs/tasks/{data.TASK}',
                                       404, [f'repair task {data.TASK} not '
                                             'found'])
        res = self.client.get(TASK_URL)
        self.assertEqual(404, res.status_code)
        self.assertIn('not found', res.json()['detail'])

    @mock.patch(API + 'repair_task')
    def test_a_task_id_is_a_uuid(self, get):
        res = self.client.get(reverse('horizon:admin:scoped_repairs:index')
                              + 'tasks/not-a-task/')
        self.assertEqual(404, res.status_code)
        get.assert_not_called()

    @mock.patch(API + 'repair_task_cancel')
    def test_cancel(self, cancel):
        cancel.return_value = data.task(cancel_requested=True)
        res = self.client.delete(TASK_URL)
        self.assertEqual(202, res.status_code)
        self.assertTrue(res.json()['task']['cancel_requested'])
        cancel.assert_called_once_with(mock.ANY, data.TASK)
        cancel.side_effect = api.APIError(
            'DELETE', f'/repairs/tasks/{data.TASK}', 409,
            [f'repair task {data.TASK} is applied already'])
        res = self.client.delete(TASK_URL)
        self.assertEqual(409, res.status_code)
        self.assertIn('applied already', res.json()['detail'])


class RepairTaskCallsTest(helpers.AdminTestCase):
    """The wrapper's calls of the repair task API (its answers as
    typed records)."""

    @mock.patch(API + '_call')
    def test_apply_posts_every_move_and_reads_the_task(self, call):
        call.return_value = {'task': {
            'id': data.TASK, 'target': 'all', 'status': 'stopped',
            'moves': [data.MOVE_1, data.MOVE_2], 'done': [data.MOVE_1],
            'current': [], 'cancel_requested': False,
            'failed': {'move': data.MOVE_2, 'reason': 'timed out',
                       'host': 'h-a'},
            'created_at': '2026-11-25T23:00:00Z',
            'finished_at': '2026-11-25T23:02:00Z'}}
        moves = [api.Move.of(data.MOVE_1), api.Move.of(data.MOVE_2)]
        task = api.repair_apply(mock.sentinel.request, api.Target.of(
            'server_group', data.GROUP), 'f1', moves)
        call.assert_called_once_with(
            mock.sentinel.request, 'POST', '/repairs/apply', {'repair': {
                'server_group': data.GROUP, 'fingerprint': 'f1',
                'moves': [data.MOVE_1, data.MOVE_2]}})
        self.assertEqual((data.TASK, 'stopped', tuple(moves), moves[:1]),
                         (task.id, task.status, task.moves,
                          list(task.done)))
        self.assertEqual(api.TaskFailure(moves[1], 'timed out', 'h-a'),
                         task.failed)
        self.assertFalse(task.running or task.applied)

    @mock.patch(API + '_call')
    def test_progress_and_cancel(self, call):
        call.return_value = {'task': {'id': data.TASK, 'status': 'running',
                                      'moves': [data.MOVE_1]}}
        self.assertTrue(api.repair_task(mock.sentinel.request,
                                        data.TASK).running)
        call.assert_called_with(mock.sentinel.request, 'GET',
                                f'/repairs/tasks/{data.TASK}')
        api.repair_task_cancel(mock.sentinel.request, data.TASK)
        call.assert_called_with(mock.sentinel.request, 'DELETE',
                                f'/repairs/tasks/{data.TASK}')


class TenantsSeeNoAdminPanels(helpers.TestCase):

    @mock.patch(API + 'repair_task_cancel')
    @mock.patch(API + 'repair_task')
    def test_the_admin_panels_are_not_a_tenants(self, get, cancel):
        res = self.client.get(reverse('horizon:admin:scoped_repairs:index'))
        self.assertNotEqual(200, res.status_code)
        for method in (self.client.get, self.client.delete):
            res = method(TASK_URL)
            self.assertNotIn(res.status_code, (200, 202))
        get.assert_not_called()
        cancel.assert_not_called()
