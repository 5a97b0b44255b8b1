"""The admin panels: scopes with the heatmap, every violation, repair
plans and their apply one move at a time (API wrapper mocked)."""

import json
from unittest import mock

from django.urls import reverse

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard.tests import data
from nova_scoped_policies.dashboard.tests import helpers

API = 'nova_scoped_policies.dashboard.api.scoped_policies.'
PLAN = reverse('horizon:admin:scoped_repairs:plan')
APPLY = reverse('horizon:admin:scoped_repairs:apply')


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
    def test_apply_one_move(self, apply):
        apply.return_value = api.Applied.of({
            'status': 'applied', 'failed': None, 'left': [],
            'done': [{'server': data.I2, 'from': 'h-a', 'to': 'h-b'}],
            'violations': [], 'fingerprint': 'f2'})
        res = self.client.post(APPLY, json.dumps({
            'kind': 'server_group', 'id': data.GROUP, 'fingerprint': 'f1',
            'move': {'server': data.I2, 'from': 'h-a', 'to': 'h-b'}}),
            content_type='application/json')
        self.assertEqual(200, res.status_code)
        self.assertEqual(('applied', 'f2'), (res.json()['status'],
                                             res.json()['fingerprint']))
        apply.assert_called_once_with(
            mock.ANY, api.Target('server_group', data.GROUP), 'f1',
            [api.Move(data.I2, 'h-a', 'h-b')])

    @mock.patch(API + 'repair_apply')
    def test_an_outdated_plan_is_refused_with_the_api_detail(self, apply):
        apply.side_effect = api.APIError('POST', '/repairs/apply', 409, [
            'the plan no longer fits the cloud (...); nothing was moved'])
        res = self.client.post(APPLY, json.dumps({
            'kind': 'all', 'fingerprint': 'f1',
            'move': {'server': data.I2, 'from': 'h-a', 'to': 'h-b'}}),
            content_type='application/json')
        self.assertEqual(409, res.status_code)
        self.assertIn('nothing was moved', res.json()['detail'])

    def test_a_bad_body_is_400_naming_what(self):
        res = self.client.post(APPLY, json.dumps({'kind': 'moon'}),
                               content_type='application/json')
        self.assertEqual(400, res.status_code)
        self.assertIn('kind', res.json()['detail'])


class TenantsSeeNoAdminPanels(helpers.TestCase):

    def test_the_admin_panels_are_not_a_tenants(self):
        res = self.client.get(reverse('horizon:admin:scoped_repairs:index'))
        self.assertNotEqual(200, res.status_code)
