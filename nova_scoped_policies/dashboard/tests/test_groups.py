"""The project's Scoped policies panel (API wrapper mocked)."""

from unittest import mock

from django.urls import reverse

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard.tests import data
from nova_scoped_policies.dashboard.tests import helpers

INDEX = reverse('horizon:project:scoped_groups:index')
DETAIL = reverse('horizon:project:scoped_groups:detail', args=[data.GROUP])
CREATE = reverse('horizon:project:scoped_groups:create')
UPDATE = reverse('horizon:project:scoped_groups:update', args=[data.GROUP])
MEMBER = reverse('horizon:project:scoped_groups:member', args=[data.GROUP])
REPAIR = reverse('horizon:project:scoped_groups:repair', args=[data.GROUP])
API = 'nova_scoped_policies.dashboard.api.scoped_policies.'


class GroupsTest(helpers.TestCase):

    def test_the_client_acts_with_the_users_token_on_the_catalogs_api(self):
        request = self.factory.get('/')
        client = api.client(request)
        session = client.adapter.session
        self.assertEqual(helpers.ENDPOINT,
                         session.auth.get_endpoint(session))
        self.assertEqual(request.user.token.id,
                         session.auth.get_token(session))
        self.assertEqual('scoped-policies', client.adapter.service_type)
        # the microversion whose answers the panels read, whatever the
        # API's latest
        self.assertEqual(api.VERSION, client.version)

    @mock.patch(API + 'group_audit')
    @mock.patch(API + 'group_list')
    def test_the_list_shows_policies_rules_members_and_audit(
            self, group_list, group_audit):
        group_list.return_value = [data.group()]
        group_audit.return_value = data.audit()
        res = self.client.get(INDEX)
        self.assertTemplateUsed(res, 'scoped_policies/table.html')
        (row,) = res.context['table'].data
        self.assertEqual((data.GROUP, 'violated'), (row.id, row.status))
        self.assertContains(res, 'anti-affinity:rack')
        self.assertContains(res, 'max_server_per_rack=1')
        group_list.assert_called_once_with(mock.ANY)

    @mock.patch(API + 'group_audit')
    @mock.patch(API + 'group_list')
    def test_an_audit_the_api_refuses_is_unknown(self, group_list,
                                                 group_audit):
        group_list.return_value = [data.group()]
        group_audit.side_effect = api.APIError('GET', '/x', 503, ['down'])
        res = self.client.get(INDEX)
        self.assertEqual('unknown', res.context['table'].data[0].status)

    @mock.patch(API + 'group_list')
    def test_the_list_the_api_refuses_is_a_message(self, group_list):
        group_list.side_effect = api.APIError('GET', '/x', 503, ['down'])
        res = self.client.get(INDEX)
        self.assertEqual([], res.context['table'].data)
        self.assertMessageCount(res, error=1)

    @mock.patch(API + 'scope_get')
    @mock.patch(API + 'group_audit')
    @mock.patch(API + 'group_get')
    def test_the_page_charts_members_per_domain(self, get, audit,
                                                scope_get):
        get.return_value = data.group()
        audit.return_value = data.audit()
        scope_get.return_value = data.scope()
        res = self.client.get(DETAIL)
        self.assertTemplateUsed(res, 'scoped_policies/detail.html')
        self.assertTemplateUsed(res, 'scoped_policies/_chart.html')
        # two on rack 1, the scope's other racks at zero
        self.assertContains(
            res, f'data-domain="{data.RACK_1}" data-count="2"')
        self.assertContains(
            res, f'data-domain="{data.RACK_3}" data-count="0"')
        self.assertContains(res, 'holds 2 of max 1')
        scope_get.assert_called_once_with(mock.ANY, 'rack')

    @mock.patch(API + 'group_get')
    def test_a_group_the_api_does_not_show_goes_back_to_the_list(
            self, get):
        get.side_effect = api.APIError('GET', '/x', 404,
                                       [f'server group {data.GROUP} not '
                                        'found'])
        res = self.client.get(DETAIL)
        self.assertRedirectsNoFollow(res, INDEX)

    @mock.patch(API + 'group_create')
    def test_set_a_policy(self, create):
        create.return_value = data.group()
        res = self.client.post(CREATE, {
            'group_id': data.GROUP, 'name': 'db',
            'policies': 'anti-affinity:rack\r\nanti-affinity:host\r\n',
            'rules': 'max_server_per_rack=1\r\n'})
        self.assertNoFormErrors(res)
        self.assertRedirectsNoFollow(res, INDEX)
        create.assert_called_once_with(
            mock.ANY, data.GROUP, 'db',
            ['anti-affinity:rack', 'anti-affinity:host'],
            {'max_server_per_rack': 1})

    @mock.patch(API + 'group_create')
    def test_the_api_field_errors_are_shown_on_the_field(self, create):
        create.side_effect = api.APIError('POST', '/os-server-groups', 400, [
            "server_group.policies[0]: 'anti-affinity:moon': no scope "
            "named moon"])
        res = self.client.post(CREATE, {
            'group_id': data.GROUP, 'policies': 'anti-affinity:moon',
            'rules': ''})
        form = res.context['form']
        self.assertEqual(["server_group.policies[0]: 'anti-affinity:moon': "
                          'no scope named moon'], form.errors['policies'])
        self.assertNotIn('__all__', form.errors)

    @mock.patch(API + 'group_create')
    def test_a_rule_error_on_rules_another_on_the_form(self, create):
        create.side_effect = api.APIError('POST', '/os-server-groups', 409, [
            'server_group.rules.max_server_per_rack: -1: must be at least '
            '1', 'a group of yours has scoped policies already'])
        res = self.client.post(CREATE, {
            'group_id': data.GROUP, 'policies': 'anti-affinity:rack',
            'rules': 'max_server_per_rack=-1'})
        errors = res.context['form'].errors
        self.assertIn('must be at least 1', errors['rules'][0])
        self.assertIn('already', errors['__all__'][0])

    def test_a_rule_line_without_a_value_is_refused_before_the_api(self):
        res = self.client.post(CREATE, {
            'group_id': data.GROUP, 'policies': 'anti-affinity:rack',
            'rules': 'max_server_per_rack'})
        self.assertIn('not name=value', res.context['form'].errors[
            'rules'][0])

    @mock.patch(API + 'group_update')
    @mock.patch(API + 'group_get')
    def test_edit_starts_from_the_group_and_replaces_it(self, get, update):
        get.return_value = data.group()
        res = self.client.get(UPDATE)
        form = res.context['form']
        self.assertEqual('anti-affinity:rack', form.initial['policies'])
        self.assertEqual('max_server_per_rack=1', form.initial['rules'])
        update.return_value = data.group()
        res = self.client.post(UPDATE, {
            'group_id': data.GROUP, 'name': 'db',
            'policies': 'anti-affinity:host', 'rules': ''})
        self.assertNoFormErrors(res)
        update.assert_called_once_with(mock.ANY, data.GROUP, 'db',
                                       ['anti-affinity:host'], {})

    @mock.patch(API + 'group_member')
    def test_add_a_member(self, member):
        res = self.client.post(MEMBER, {'group_id': data.GROUP,
                                        'instance_id': data.I1,
                                        'action': 'add'})
        self.assertNoFormErrors(res)
        self.assertRedirectsNoFollow(res, DETAIL)
        member.assert_called_once_with(mock.ANY, data.GROUP, data.I1, True)

    @mock.patch(API + 'group_member')
    def test_a_member_the_api_refuses_is_shown_on_the_field(self, member):
        member.side_effect = api.APIError('POST', '/x', 404, [
            f'remove_instance.instance_id: instance {data.I1} is not a '
            'member'])
        res = self.client.post(MEMBER, {'group_id': data.GROUP,
                                        'instance_id': data.I1,
                                        'action': 'remove'})
        self.assertIn('is not a member',
                      res.context['form'].errors['instance_id'][0])

    @mock.patch(API + 'repair_plan')
    def test_plan_a_repair_shows_the_moves(self, plan):
        plan.return_value = data.plan()
        res = self.client.get(REPAIR)
        self.assertTemplateUsed(res, 'scoped_policies/groups/repair.html')
        (move,) = res.context['table'].data
        self.assertEqual((data.I2, 'h-a', 'h-b'),
                         (move.server, move.source, move.destination))
        self.assertContains(res, 'repaired')
        plan.assert_called_once_with(
            mock.ANY, api.Target('server_group', data.GROUP))
        # a tenant has no Apply
        self.assertNotContains(res, 'nsp-apply')


def test_the_scopes_of_a_group_are_those_of_its_policies_and_rules():
    group = data.group(policy=[
        {'name': 'affinity:zone:' + data.RACK_1, 'rules': {}},
        {'name': 'anti-affinity', 'rules': {'max_server_per_rack': 2}}])
    assert group.scopes == ('zone', 'host', 'rack')
    assert group.rules == {'max_server_per_rack': 2}
