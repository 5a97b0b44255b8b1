"""``/repairs`` (microversion 1.2): repair plans and what is refused.

A plan moves nothing; the scenario test ``test_repairs`` carries one out.
"""

from tempest.lib.common.utils import data_utils
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_scoped_policies.tempest.tests import base


class RepairsBase(base.ScopedPoliciesTest):
    """Skipped when ``[scoped_policies] repairs`` is False."""

    min_microversion = '1.4'
    features = ('repairs',)
    scope_needed = True


class RepairsTest(RepairsBase):
    """Plans of groups that need no repair."""

    @decorators.idempotent_id('00fa4d56-ab1a-4f94-8d5a-7879283fadae')
    def test_a_group_without_violations_has_nothing_to_do(self):
        group = self.create_group(self.primary, [self.policy])
        plan = self.primary.repairs.plan_repair(
            server_group=group['id'])['repair']
        self.assertEqual('nothing to do', plan['status'])
        self.assertEqual([], plan['moves'])
        self.assertEqual([], plan['violations'])
        self.assertFalse(plan['needs_administrator'])
        self.assertEqual(group['id'], plan['server_group'])
        self.assertRegex(plan['fingerprint'], '^[0-9a-f]{64}$')

    @decorators.idempotent_id('a6b0a92f-454a-459d-854f-8ac4fb0304c4')
    def test_an_administrator_plans_for_the_whole_cloud(self):
        plan = self.admin.repairs.plan_repair()['repair']
        self.assertIn(plan['status'], ('nothing to do', 'repaired',
                                       'impossible', 'not found in time'))


class RepairsNegativeTest(RepairsBase):
    """What the repairs API refuses; what another project sees."""

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('f60ff89e-3446-419d-9b49-203a7a7928cf')
    def test_a_tenant_may_not_plan_for_the_whole_cloud(self):
        self.assertRaises(lib_exc.Forbidden, self.primary.repairs.plan_repair)

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('66e30bfb-1ddc-47d9-9f25-f1a92ac053e4')
    def test_an_unknown_group_is_404(self):
        self.assertRaises(lib_exc.NotFound, self.primary.repairs.plan_repair,
                          server_group=data_utils.rand_uuid())

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('3b1c0a74-933c-455a-8c05-6bacdb2ec75b')
    def test_another_projects_group_is_404(self):
        group = self.create_group(self.primary, [self.policy])
        self.assertRaises(lib_exc.NotFound, self.alt.repairs.plan_repair,
                          server_group=group['id'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('ba2ff4d4-8c1e-49ed-972e-0f5f13881532')
    def test_two_targets_are_400(self):
        self.assertRaises(lib_exc.BadRequest, self.primary.repairs.plan_repair,
                          server_group=data_utils.rand_uuid(),
                          stack=data_utils.rand_uuid())

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('88f45817-50ff-4bef-ba62-80cb7ecd94a9')
    def test_a_tenant_may_not_apply_a_plan(self):
        group = self.create_group(self.primary, [self.policy])
        self.assertRaises(lib_exc.Forbidden, self.primary.repairs.apply_repair,
                          '0' * 64, [self._move()], server_group=group['id'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('d28eece3-58c9-46af-b904-c04f6194b24a')
    def test_a_plan_whose_world_changed_is_409_before_any_move(self):
        group = self.create_group(self.primary, [self.policy])
        exc = self.assertRaises(lib_exc.Conflict,
                                self.admin.repairs.apply_repair, '0' * 64,
                                [self._move()], server_group=group['id'])
        self.assertCode(exc, 'scoped_policies.repair_outdated')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('a9e17c4f-228a-4890-afeb-4d3724fec18b')
    def test_repairs_need_microversion_1_2(self):
        client = self.at_microversion(self.primary.repairs, '1.1')
        self.assertRaises(lib_exc.NotFound, client.plan_repair,
                          server_group=data_utils.rand_uuid())

    @staticmethod
    def _move():
        return {'server': data_utils.rand_uuid(), 'from': 'nowhere',
                'to': 'elsewhere'}
