"""The panels offer an action only to those whose roles pass its rule
(the policy API's rules in code, or the operator's copy of its policy
file), and a refusal of the policy API shows its reason, never "Unable
to ..." (API wrapper mocked)."""

import os
import tempfile
from unittest import mock

from django.test import utils as django_utils
from django.urls import reverse

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard.tests import data
from nova_scoped_policies.dashboard.tests import helpers
from nova_scoped_policies.dashboard.tests import test_stacks

API = 'nova_scoped_policies.dashboard.api.scoped_policies.'
GROUPS = reverse('horizon:project:scoped_groups:index')
GROUP = reverse('horizon:project:scoped_groups:detail', args=[data.GROUP])
REPAIR = reverse('horizon:project:scoped_groups:repair', args=[data.GROUP])
STACKS = test_stacks.INDEX
PLAN = reverse('horizon:admin:scoped_repairs:plan')
READER = [{'id': '3', 'name': 'reader'}]
REFUSED = 'Policy does not allow scoped_policies:repairs:plan to be ' \
    'performed.'
GROUP_ACTIONS = ('groups__action_create', 'Edit policy',
                 'Add or remove a member', 'Plan a repair',
                 'Drop scoped policy')


def forbidden(rule: str) -> api.APIError:
    return api.APIError('POST', '/x', 403, [
        f'Policy does not allow {rule} to be performed.'])


class ReaderTest(helpers.TestCase):
    """A project's reader: every read, no write."""

    def setUp(self):
        super().setUp()
        self._setup_user(roles=list(READER))

    @mock.patch(API + 'group_audit')
    @mock.patch(API + 'group_list')
    def test_the_groups_without_set_policy_or_any_write(self, listed,
                                                        audited):
        listed.return_value = [data.group()]
        audited.return_value = data.audit()
        res = self.client.get(GROUPS)
        self.assertContains(res, 'anti-affinity:rack')
        for action in GROUP_ACTIONS:
            self.assertNotContains(res, action)

    @mock.patch(API + 'scope_get')
    @mock.patch(API + 'group_audit')
    @mock.patch(API + 'group_get')
    def test_a_groups_chart_without_actions(self, get, audited, scope):
        get.return_value = data.group()
        audited.return_value = data.audit()
        scope.return_value = data.scope()
        res = self.client.get(GROUP)
        self.assertContains(res, f'data-domain="{data.RACK_1}"')
        for action in GROUP_ACTIONS:
            self.assertNotContains(res, action)

    @mock.patch(API + 'stack_audit')
    @mock.patch(API + 'stack_list')
    def test_the_stacks_without_release(self, listed, audited):
        listed.return_value = [test_stacks.stack()]
        audited.return_value = test_stacks.audit()
        res = self.client.get(STACKS)
        self.assertContains(res, test_stacks.STACK)
        self.assertNotContains(res, 'Release')

    @mock.patch(API + 'repair_plan')
    def test_a_refused_plan_says_the_apis_reason(self, plan):
        plan.side_effect = forbidden('scoped_policies:repairs:plan')
        res = self.client.get(REPAIR)
        self.assertMessageCount(res, error=1)
        self.assertContains(res, REFUSED)
        self.assertNotContains(res, 'Unable to')


class MemberTest(helpers.TestCase):

    @mock.patch(API + 'group_audit')
    @mock.patch(API + 'group_list')
    def test_the_member_sees_every_write_of_its_project(self, listed,
                                                        audited):
        listed.return_value = [data.group()]
        audited.return_value = data.audit()
        res = self.client.get(GROUPS)
        for action in GROUP_ACTIONS:
            self.assertContains(res, action)

    @mock.patch(API + 'group_audit')
    @mock.patch(API + 'group_list')
    def test_no_write_on_another_projects_group(self, listed, audited):
        listed.return_value = [data.group(project_id='another')]
        audited.return_value = data.audit()
        res = self.client.get(GROUPS)
        self.assertContains(res, 'groups__action_create')
        self.assertNotContains(res, 'Edit policy')

    @mock.patch(API + 'stack_delete')
    @mock.patch(API + 'stack_audit')
    @mock.patch(API + 'stack_list')
    def test_a_refused_release_says_the_apis_reason(self, listed, audited,
                                                    delete):
        # the operator's policy API refuses what Horizon offered
        listed.return_value = [test_stacks.stack()]
        audited.return_value = test_stacks.audit()
        delete.side_effect = forbidden('scoped_policies:stacks:delete')
        res = self.client.post(STACKS, {
            'action': f'stacks__delete__{test_stacks.STACK}'})
        self.assertRedirectsNoFollow(res, STACKS)
        shown = [str(m) for m in res.wsgi_request._messages]
        self.assertEqual(['Policy does not allow scoped_policies:stacks:'
                          'delete to be performed.'], shown)


class OperatorPolicyFileTest(helpers.AdminTestCase):
    """Horizon's copy of the policy API's policy file, named in
    ``POLICY_FILES`` under ``scoped-policies``, decides what is offered."""

    @mock.patch(API + 'repair_plan')
    def test_apply_is_offered_as_the_policy_file_says(self, plan):
        plan.return_value = data.plan()
        query = {'kind': 'server_group', 'id': data.GROUP}
        self.assertContains(self.client.get(PLAN, query), 'nsp-apply')
        with tempfile.TemporaryDirectory() as directory:
            with open(os.path.join(directory, 'nsp.yaml'), 'w') as out:
                out.write('"scoped_policies:repairs:apply": "role:ops"\n')
            with django_utils.override_settings(
                    POLICY_FILES_PATH=directory,
                    POLICY_FILES={'scoped-policies': 'nsp.yaml'}):
                res = self.client.get(PLAN, query)
        self.assertContains(res, 'repaired')
        self.assertNotContains(res, 'nsp-apply')
