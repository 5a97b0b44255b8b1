"""``/os-server-groups``: the scoped policies of Nova server groups,
their members and audits; what is refused; what another project sees.

Each test makes its own Nova server group (the policy API's group id is
the Nova group's) and deletes both after it.
"""

from tempest.lib.common.utils import data_utils
from tempest.lib.common.utils import test_utils
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_scoped_policies.tempest.tests import base


class GroupsBase(base.ScopedPoliciesTest):
    """Needs the scope under test (``[scoped_policies] scope``)."""

    scope_needed = True


class GroupsTest(GroupsBase):
    """A tenant's scoped groups."""

    @decorators.idempotent_id('a94fddad-01a7-4d71-abaa-4c1b85a18295')
    def test_create_show_list_and_delete(self):
        rule = f'max_server_per_{self.scope}'
        group = self.create_group(self.primary, [self.policy],
                                  {rule: 2})
        self.assertEqual([self.policy], group['policies'])
        self.assertEqual({rule: 2}, group['rules'])
        self.assertEqual(self.primary.project_id, group['project_id'])
        self.assertEqual([], group['members'])

        shown = self.primary.groups.show_group(group['id'])['server_group']
        self.assertEqual(group['name'], shown['name'])
        listed = self.primary.groups.list_groups()['server_groups']
        self.assertIn(group['id'], [g['id'] for g in listed])

        self.primary.groups.delete_group(group['id'])
        self.assertRaises(lib_exc.NotFound, self.primary.groups.show_group,
                          group['id'])

    @decorators.idempotent_id('c82008c0-6853-4d93-9633-9a1476244e7a')
    def test_new_policies_replace_the_old_ones(self):
        group = self.create_group(self.primary, [self.policy])
        name = data_utils.rand_name('nsp-renamed')
        changed = self.primary.groups.update_group(
            group['id'], name=name, policies=[f'affinity:{self.scope}'],
            rules={})['server_group']
        self.assertEqual(name, changed['name'])
        self.assertEqual([f'affinity:{self.scope}'], changed['policies'])

    @decorators.idempotent_id('9046464b-f4b8-4179-aa5f-7d54c60d5093')
    def test_the_policy_object_form_from_1_3(self):
        client = self.at_microversion(self.primary.groups, '1.3')
        nova_group = self.create_nova_group(self.primary)
        rule = f'max_server_per_{self.scope}'
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        client.delete_group, nova_group)
        group = client.create_group(nova_group, name='object-form', policy={
            'name': self.policy, 'rules': {rule: 1}})['server_group']
        self.assertEqual({'name': self.policy, 'rules': {rule: 1}},
                         group['policy'])
        self.assertNotIn('policies', group)

    @decorators.idempotent_id('497d2477-cdae-4483-8a19-ce9171b59e7b')
    def test_a_new_group_audits_clean(self):
        group = self.create_group(self.primary, [self.policy])
        audit = self.primary.groups.audit_group(
            group['id'])['server_group_policy_audit']
        self.assertEqual(group['id'], audit['server_group_id'])
        self.assertEqual([], audit['members'])
        self.assertEqual([], audit['violations'])

    @decorators.idempotent_id('cd2c056d-df17-46d4-b8ee-5db2ffae45d7')
    def test_add_and_remove_an_instance(self):
        group = self.create_group(self.primary, [self.policy])
        server = self.boot(self.primary)
        added = self.primary.groups.add_instance(
            group['id'], server['id'])['server_group']
        self.assertIn(server['id'], added['members'])
        audit = self.primary.groups.audit_group(
            group['id'])['server_group_policy_audit']
        self.assertEqual([server['id']],
                         [m['instance_id'] for m in audit['members']])
        removed = self.primary.groups.remove_instance(
            group['id'], server['id'])['server_group']
        self.assertNotIn(server['id'], removed['members'])

    @decorators.idempotent_id('b1b522f6-83b9-454c-9418-61e013d9576f')
    def test_an_administrator_lists_every_project(self):
        mine = self.create_group(self.primary, [self.policy])
        theirs = self.create_group(self.alt, [self.policy])
        listed = {g['id'] for g in self.admin.groups.list_groups(
            all_projects='true')['server_groups']}
        self.assertLessEqual({mine['id'], theirs['id']}, listed)
        one = {g['id'] for g in self.admin.groups.list_groups(
            project_id=self.alt.project_id)['server_groups']}
        self.assertIn(theirs['id'], one)
        self.assertNotIn(mine['id'], one)


class GroupsNegativeTest(GroupsBase):
    """What the groups API refuses, with the field it names."""

    def _refused(self, error, text, policies, rules=None):
        group_id = self.create_nova_group(self.primary)
        exc = self.assertRaises(error, self.primary.groups.create_group,
                                group_id, name='refused',
                                policies=policies, rules=rules or {})
        self.assertDetail(exc, text)
        self.assertRaises(lib_exc.NotFound, self.primary.groups.show_group,
                          group_id)

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('f28e9a63-fc77-4b62-ac5e-8f1c16b997a0')
    def test_an_unknown_scope_is_400(self):
        scope = data_utils.rand_name('nsp-no-such-scope')
        self._refused(lib_exc.BadRequest, 'server_group.policies[0]',
                      [f'anti-affinity:{scope}'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('2e22d7c1-62e1-4e27-aafc-c8f446057060')
    def test_contradicting_policies_are_400(self):
        self._refused(lib_exc.BadRequest, 'server_group.policies',
                      [f'affinity:{self.scope}', self.policy])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('f9f5ca78-ca0e-41b1-b851-fc10715d898f')
    def test_a_bad_rule_is_400(self):
        rule = f'max_server_per_{self.scope}'
        self._refused(lib_exc.BadRequest, f'server_group.rules.{rule}',
                      [self.policy], {rule: 0})

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('3c3e08ef-5851-4850-be41-7530de773480')
    def test_a_group_id_must_be_a_uuid(self):
        exc = self.assertRaises(lib_exc.BadRequest,
                                self.primary.groups.create_group,
                                'not-a-uuid', policies=[self.policy])
        self.assertDetail(exc, 'server_group.id')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('ce37091d-6bc6-4212-a331-f182a5cc4618')
    def test_a_group_with_scoped_policies_already_is_409(self):
        group = self.create_group(self.primary, [self.policy])
        self.assertRaises(lib_exc.Conflict, self.primary.groups.create_group,
                          group['id'], policies=[self.policy])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('e2631ccb-c002-4c24-b922-855912dc9018')
    def test_a_group_nova_does_not_know_is_404(self):
        self.assertRaises(lib_exc.NotFound, self.primary.groups.create_group,
                          data_utils.rand_uuid(),
                          policies=[self.policy])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('2f86f6d7-f894-4f0d-9dc1-37af2dec0645')
    def test_a_bad_update_is_400_and_changes_nothing(self):
        group = self.create_group(self.primary, [self.policy])
        self.assertRaises(lib_exc.BadRequest,
                          self.primary.groups.update_group, group['id'],
                          name=7)
        shown = self.primary.groups.show_group(group['id'])['server_group']
        self.assertEqual(group['name'], shown['name'])
        self.assertEqual(group['policies'], shown['policies'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('a4cbb840-801f-4642-afaa-dc15529387e5')
    def test_removing_a_non_member_is_404(self):
        group = self.create_group(self.primary, [self.policy])
        exc = self.assertRaises(lib_exc.NotFound,
                                self.primary.groups.remove_instance,
                                group['id'], data_utils.rand_uuid())
        self.assertDetail(exc, 'remove_instance.instance_id')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('0d14c288-62f7-4e09-bf0c-c8370bd1277c')
    def test_a_tenant_may_not_list_every_project(self):
        self.assertRaises(lib_exc.Forbidden, self.primary.groups.list_groups,
                          all_projects='true')


class GroupsTenancyTest(GroupsBase):
    """A second project sees nothing of the first's groups."""

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('aec66041-fa2e-472e-a6b5-67ecab68359b')
    def test_another_project_sees_nothing(self):
        group = self.create_group(self.primary, [self.policy])
        server = self.boot(self.primary)
        self.primary.groups.add_instance(group['id'], server['id'])
        other = self.alt.groups
        for call, args, kwargs in (
                (other.show_group, (), {}),
                (other.audit_group, (), {}),
                (other.update_group, (), {'name': 'taken'}),
                (other.delete_group, (), {}),
                (other.add_instance, (data_utils.rand_uuid(),), {}),
                (other.remove_instance, (server['id'],), {})):
            self.assertRaises(lib_exc.NotFound, call, group['id'], *args,
                              **kwargs)
        listed = other.list_groups()['server_groups']
        self.assertNotIn(group['id'], [g['id'] for g in listed])
        # nor may it give the first project's Nova group scoped policies
        exc = self.assertRaises(lib_exc.NotFound, other.create_group,
                                group['id'], policies=[self.policy])
        self.assertDetail(exc, f'server group {group["id"]} not found')
        # and the first project's group is as it was
        shown = self.primary.groups.show_group(group['id'])['server_group']
        self.assertEqual([server['id']], shown['members'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('b05e1d25-4ee6-47f8-8b7b-959a0caed657')
    def test_another_projects_server_cannot_join(self):
        group = self.create_group(self.primary, [self.policy])
        server = self.boot(self.alt)
        exc = self.assertRaises(lib_exc.NotFound,
                                self.primary.groups.add_instance,
                                group['id'], server['id'])
        self.assertDetail(exc, f'instance {server["id"]} not found')
