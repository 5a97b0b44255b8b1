"""``/stacks`` (microversion 1.1): a stack decided jointly and held in
Placement under a lease; renewed, confirmed, audited, deleted; what is
refused; what another project sees.

The decisions here hold one server of ``[compute] flavor_ref``'s size
for a few seconds; every stack is deleted after its test, which gives
its holds back.
"""

from tempest.lib.common.utils import data_utils
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_scoped_policies.tempest.tests import base


class StacksBase(base.ScopedPoliciesTest):
    """Skipped when ``[scoped_policies] stacks`` is False."""

    min_microversion = '1.2'
    features = ('stacks',)
    domains_needed = 1

    def document(self, count=1, policies=('anti-affinity:host',),
                 **stack) -> dict:
        """A stack of one group of ``count`` servers of the test flavor."""
        stack.setdefault('name', data_utils.rand_name('nsp-stack'))
        stack.setdefault('lease_seconds', 300)
        stack.setdefault('group', {
            'name': 'web', 'policies': list(policies),
            'servers': {'count': count,
                        'flavor': {'resources': self.flavor_resources()}}})
        return stack


class StacksTest(StacksBase):
    """A tenant's stack decisions."""

    @decorators.idempotent_id('c9a2d0d5-edde-4f5a-8328-df8efa37d06a')
    def test_decide_renew_confirm_and_delete(self):
        stack = self.create_stack(self.primary, **self.document())
        self.assertEqual('reserved', stack['status'])
        self.assertEqual(self.primary.project_id, stack['project_id'])
        self.assertEqual({'web-1'}, set(stack['servers']))
        self.assertEqual('held', stack['servers']['web-1']['state'])
        self.assertEqual({'scoped_plan': stack['id'],
                          'scoped_plan_member': 'web-1'},
                         stack['hints']['web-1'])

        # a tenant sees a surrogate, an administrator the host
        admin = self.admin.stacks.show_stack(stack['id'])['stack']
        self.assertIn(admin['servers']['web-1']['host'],
                      set().union(*self.domains().values()))
        self.assertNotEqual(admin['servers']['web-1']['host'],
                            stack['servers']['web-1']['host'])

        # the lease runs 600 s from now, where it ran 300
        renewed = self.primary.stacks.renew_stack(stack['id'], 600)['stack']
        self.assertGreater(renewed['expires_at'], stack['expires_at'])

        audit = self.primary.stacks.audit_stack(stack['id'])['stack_audit']
        self.assertEqual('ok', audit['status'])

        confirmed = self.primary.stacks.confirm_stack(stack['id'])['stack']
        self.assertEqual('confirmed', confirmed['status'])

        self.primary.stacks.delete_stack(stack['id'])
        self.assertRaises(lib_exc.NotFound, self.primary.stacks.show_stack,
                          stack['id'])

    @decorators.idempotent_id('a6bb35d5-a084-42e5-8b07-3847bbbb83a7')
    def test_a_tenant_lists_its_own_stacks(self):
        mine = self.create_stack(self.primary, **self.document())
        theirs = self.create_stack(self.alt, **self.document())
        listed = [s['id'] for s in
                  self.primary.stacks.list_stacks()['stacks']]
        self.assertIn(mine['id'], listed)
        self.assertNotIn(theirs['id'], listed)
        every = [s['id'] for s in self.admin.stacks.list_stacks(
            all_projects='true')['stacks']]
        self.assertLessEqual({mine['id'], theirs['id']}, set(every))


class StacksNegativeTest(StacksBase):
    """What the stacks API refuses."""

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('96d31ad4-8e3c-4730-9ba4-5715f83ea8f6')
    def test_a_bad_document_is_400_naming_the_field(self):
        exc = self.assertRaises(lib_exc.BadRequest,
                                self.primary.stacks.create_stack,
                                **self.document(count=0))
        self.assertDetail(exc, 'stack.group.servers.count')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('ddb9a362-c0df-4772-8d42-0533dd1ab6ba')
    def test_an_unknown_scope_is_400_naming_the_policy(self):
        scope = data_utils.rand_name('nsp-no-such-scope')
        exc = self.assertRaises(
            lib_exc.BadRequest, self.primary.stacks.create_stack,
            **self.document(policies=[f'anti-affinity:{scope}']))
        self.assertDetail(exc, 'stack.group.policies[0]')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('788de93e-db8e-40ce-9e24-8623d4896b39')
    def test_one_more_server_than_domains_apart_is_409(self):
        count = len(self.domains()) + 1
        exc = self.assertRaises(
            lib_exc.Conflict, self.primary.stacks.create_stack,
            **self.document(count=count,
                            policies=[self.policy]))
        self.assertCode(exc, 'scoped_policies.stack_infeasible')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('7715ce02-5312-4c39-a3a2-d298968c6255')
    def test_stacks_need_microversion_1_1(self):
        client = self.at_microversion(self.primary.stacks, '1.0')
        self.assertRaises(lib_exc.NotFound, client.list_stacks)

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('1008fdf8-84d8-491e-b226-fecaab536db2')
    def test_a_tenant_may_not_act_as_the_scheduler(self):
        """Before Secure RBAC only the scheduler (an administrator) gives a
        member's hold back (403); with it, the project's members may too
        (``scoped_policies:stacks:boot_member``), and another project's
        members neither may nor learn that the stack exists (404)."""
        stack = self.create_stack(self.primary, **self.document())
        if base.CONF.scoped_policies.secure_rbac:
            self.assertRaises(lib_exc.NotFound, self.alt.stacks.action,
                              stack['id'], 'boot_member', {'name': 'web-1'})
        else:
            self.assertRaises(lib_exc.Forbidden, self.primary.stacks.action,
                              stack['id'], 'boot_member', {'name': 'web-1'})

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('fdf0c25e-fbb7-4b91-a68e-300f7c52ff71')
    def test_an_unknown_stack_is_404_and_a_malformed_id_400(self):
        self.assertRaises(lib_exc.NotFound, self.primary.stacks.show_stack,
                          data_utils.rand_uuid())
        self.assertRaises(lib_exc.BadRequest, self.primary.stacks.show_stack,
                          'not-a-uuid')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('2455bf4a-16d8-47c7-8fae-966ea6cdc75e')
    def test_an_unknown_action_is_400(self):
        stack = self.create_stack(self.primary, **self.document())
        self.assertRaises(lib_exc.BadRequest, self.primary.stacks.action,
                          stack['id'], 'explode')


class StacksTenancyTest(StacksBase):
    """A second project sees nothing of the first's stacks."""

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('93477499-39e7-4277-958c-436654baad7a')
    def test_another_project_sees_nothing(self):
        stack = self.create_stack(self.primary, **self.document())
        other = self.alt.stacks
        for call, args in ((other.show_stack, ()),
                           (other.audit_stack, ()),
                           (other.renew_stack, ()),
                           (other.confirm_stack, ()),
                           (other.delete_stack, ())):
            self.assertRaises(lib_exc.NotFound, call, stack['id'], *args)
        self.assertNotIn(stack['id'],
                         [s['id'] for s in other.list_stacks()['stacks']])
        self.assertEqual('reserved', self.primary.stacks.show_stack(
            stack['id'])['stack']['status'])
