"""A stack decided jointly, its servers booted through Nova on the hosts
it decided, then confirmed (microversion 1.2).

The tenant decides two servers apart by the scope under test; each boots
with the decision's hints (``scoped_plan``, ``scoped_plan_member``) and
nova-scheduler pins it to its decided host as its hold is given back;
confirmed, the stack is live and its audit is clean. Skipped when stacks
are disabled or the scope has fewer than two domains with a compute host.
"""

from tempest.lib.common.utils import data_utils
from tempest.lib import decorators

from nova_scoped_policies.tempest.tests import base


class StackBootTest(base.ScopedPoliciesTest):
    """Decide, boot, confirm."""

    min_microversion = '1.2'
    features = ('stacks',)
    domains_needed = 2

    @decorators.attr(type=['slow'])
    @decorators.idempotent_id('d9ee3f76-aae6-4d9d-97ec-3d58b2134439')
    def test_a_stack_is_decided_booted_and_confirmed(self):
        stack = self.create_stack(
            self.primary, name=data_utils.rand_name('nsp-stack'),
            lease_seconds=600, group={
                'name': 'db', 'policies': [self.policy],
                'servers': {'count': 2, 'flavor': {
                    'resources': self.flavor_resources()}}})
        decided = self.admin.stacks.show_stack(stack['id'])['stack']
        hosts = {name: s['host'] for name, s in decided['servers'].items()}
        self.assertEqual(2, len({self.domain_of(self.found, h)
                                 for h in hosts.values()}))

        booted = {name: self.boot(self.primary, hints=hints)
                  for name, hints in stack['hints'].items()}
        for name, server in booted.items():
            self.assertEqual(hosts[name], self.host(server), name)

        shown = self.admin.stacks.show_stack(stack['id'])['stack']
        for name, server in booted.items():
            self.assertEqual(server['id'],
                             shown['servers'][name].get('instance_uuid'))
            self.assertNotEqual('held', shown['servers'][name]['state'])

        confirmed = self.primary.stacks.confirm_stack(stack['id'])['stack']
        self.assertEqual('live', confirmed['status'])
        audit = self.primary.stacks.audit_stack(stack['id'])['stack_audit']
        self.assertEqual('ok', audit['status'])
