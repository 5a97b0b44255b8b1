"""The project's Stacks panel (API wrapper mocked)."""

from unittest import mock

from django.urls import reverse

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard.tests import data
from nova_scoped_policies.dashboard.tests import helpers

STACK = '11111111-2222-4333-8444-555555555555'
OTHER = '11111111-2222-4333-8444-666666666666'
INDEX = reverse('horizon:project:scoped_stacks:index')
DETAIL = reverse('horizon:project:scoped_stacks:detail', args=[STACK])
API = 'nova_scoped_policies.dashboard.api.scoped_policies.'


def stack(status='live', stack_id=STACK):
    return api.Stack.of({
        'id': stack_id, 'name': 'app', 'project_id': data.PROJECT,
        'status': status,
        'lease_seconds': 600, 'expires_at': '2026-11-23T06:52:00+00:00',
        'servers': {'web-1': {'host': 'surrogate-1', 'state': 'booted',
                              'instance_uuid': 'i-1'},
                    'web-2': {'host': 'surrogate-2', 'state': 'held'}}})


def audit():
    return api.StackAudit.of({
        'stack_id': STACK, 'status': 'violated',
        'servers': {'web-1': 'surrogate-1'},
        'policies': [{'field': 'stack.group', 'kind': 'across',
                      'policies': ['anti-affinity:rack'],
                      'status': 'violated',
                      'violations': ['anti-affinity:rack: r holds 2 of '
                                     'max 1 (c1, c2)']}]})


class StacksTest(helpers.TestCase):

    @mock.patch(API + 'stack_audit')
    @mock.patch(API + 'stack_list')
    def test_the_list_shows_status_lease_servers_and_audit(self, listed,
                                                           audited):
        listed.return_value = [stack(), stack('expired', OTHER)]
        audited.return_value = audit()
        res = self.client.get(INDEX)
        rows = res.context['table'].data
        self.assertEqual(['violated', '-'], [r.audit for r in rows])
        # an expired decision holds nothing: not audited
        audited.assert_called_once_with(mock.ANY, STACK)
        self.assertContains(res, '2026-11-23T06:52:00+00:00')
        self.assertContains(res, 'expired')

    @mock.patch(API + 'stack_audit')
    @mock.patch(API + 'stack_get')
    def test_the_page_shows_servers_and_the_audit(self, get, audited):
        get.return_value = stack()
        audited.return_value = audit()
        res = self.client.get(DETAIL)
        self.assertTemplateUsed(res, 'scoped_policies/detail.html')
        self.assertContains(res, 'surrogate-2')
        self.assertContains(res, 'holds 2 of max 1')

    @mock.patch(API + 'stack_delete')
    @mock.patch(API + 'stack_audit')
    @mock.patch(API + 'stack_list')
    def test_release_a_decision(self, listed, audited, delete):
        listed.return_value = [stack()]
        audited.return_value = audit()
        res = self.client.post(INDEX, {'action': f'stacks__delete__{STACK}'})
        self.assertRedirectsNoFollow(res, INDEX)
        delete.assert_called_once_with(mock.ANY, STACK)
