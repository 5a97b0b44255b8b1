"""Secure RBAC personas (issue #46): in one project, a reader reads and a
member writes; the reader's every write answers 403 and changes nothing.

Skipped unless ``[scoped_policies] secure_rbac`` is True: a policy API
whose rules are still ``role:admin or project_id:%(project_id)s`` lets
any role of the project write.
"""

from tempest.lib.common.utils import data_utils
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_scoped_policies.tempest.tests import base


class PersonasBase(base.ScopedPoliciesTest):
    """``project_member`` and ``project_reader`` of one project."""

    credentials = ['project_member', 'project_reader', 'admin']
    min_microversion = '1.2'
    features = ('secure_rbac',)
    scope_needed = True

    def _group(self):
        return self.create_group(self.project_member, [self.policy])


class PersonasTest(PersonasBase):
    """Groups and repair plans."""

    @decorators.idempotent_id('cf21cff5-adb3-4d48-9e9a-5d2b44cd4e8d')
    def test_a_reader_reads(self):
        group = self._group()
        reader = self.project_reader.groups
        listed = [g['id'] for g in reader.list_groups()['server_groups']]
        self.assertIn(group['id'], listed)
        self.assertEqual(group['id'],
                         reader.show_group(group['id'])['server_group']['id'])
        reader.audit_group(group['id'])
        self.project_reader.scopes.list_scopes()

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('4f705dc1-9192-4e00-8aec-4f37ce37bdce')
    def test_a_readers_group_writes_are_403_and_change_nothing(self):
        group = self._group()
        reader = self.project_reader.groups
        nova_group = self.create_nova_group(self.project_member)
        self.assertRaises(lib_exc.Forbidden, reader.create_group,
                          nova_group, policies=[self.policy])
        self.assertRaises(lib_exc.NotFound, self.project_member.groups
                          .show_group, nova_group)
        self.assertRaises(lib_exc.Forbidden, reader.update_group,
                          group['id'], name=data_utils.rand_name('nsp'))
        self.assertRaises(lib_exc.Forbidden, reader.add_instance,
                          group['id'], data_utils.rand_uuid())
        self.assertRaises(lib_exc.Forbidden, reader.remove_instance,
                          group['id'], data_utils.rand_uuid())
        self.assertRaises(lib_exc.Forbidden, reader.delete_group,
                          group['id'])
        shown = self.project_member.groups.show_group(
            group['id'])['server_group']
        self.assertEqual(group['name'], shown['name'])
        self.assertEqual(group['policies'], shown['policies'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('0a15415f-da3e-4861-850e-0573645ead4b')
    def test_a_reader_may_not_plan_a_repair(self):
        group = self._group()
        self.assertRaises(lib_exc.Forbidden,
                          self.project_reader.repairs.plan_repair,
                          server_group=group['id'])

    @decorators.idempotent_id('18696120-2b3e-4d00-8c3d-adf855969e14')
    def test_a_member_writes(self):
        group = self._group()
        member = self.project_member.groups
        name = data_utils.rand_name('nsp')
        self.assertEqual(name, member.update_group(
            group['id'], name=name)['server_group']['name'])
        self.project_member.repairs.plan_repair(server_group=group['id'])
        member.delete_group(group['id'])


class PersonasStacksTest(PersonasBase):
    """Stacks: a reader may not hold capacity nor touch a member's."""

    features = ('secure_rbac', 'stacks')

    def _document(self):
        return {'name': data_utils.rand_name('nsp-stack'),
                'lease_seconds': 300,
                'group': {'name': 'web', 'policies': ['anti-affinity:host'],
                          'servers': {'count': 1, 'flavor': {
                              'resources': self.flavor_resources()}}}}

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('199e9e68-368a-4695-956e-15c625a2b43d')
    def test_a_readers_stack_writes_are_403(self):
        stack = self.create_stack(self.project_member, **self._document())
        reader = self.project_reader.stacks
        self.assertEqual(stack['id'],
                         reader.show_stack(stack['id'])['stack']['id'])
        self.assertIn(stack['id'],
                      [s['id'] for s in reader.list_stacks()['stacks']])
        reader.audit_stack(stack['id'])
        self.assertRaises(lib_exc.Forbidden, reader.create_stack,
                          **self._document())
        for call in (reader.renew_stack, reader.confirm_stack,
                     reader.delete_stack):
            self.assertRaises(lib_exc.Forbidden, call, stack['id'])
        self.assertEqual('reserved', self.project_member.stacks.show_stack(
            stack['id'])['stack']['status'])
