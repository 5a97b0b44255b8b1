"""A violation repaired through a repair task (microversion 1.4).

Two members of an ``affinity:<scope>`` group boot into one domain; the
tenant then changes the policy to ``anti-affinity:<scope>`` (members are
not moved: the audit shows the violation). The tenant's plan and an
administrator's say one live migration; the administrator applies it as
a repair task and follows the task to its end: the members are in two
domains and the audit is clean.
A cancel that comes after the end answers 409. Skipped without repairs,
without live migration, or with fewer than two domains with a compute
host up.
"""

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_scoped_policies.tempest.tests import base


class RepairTaskTest(base.ScopedPoliciesTest):
    """Plan, apply as a task, follow it, audit."""

    min_microversion = '1.4'
    features = ('repairs',)
    needs_live_migration = True
    domains_needed = 2

    @decorators.attr(type=['slow'])
    @decorators.idempotent_id('22c6c4fa-bc8f-4e8b-a5f2-eb41bd4eb876')
    def test_a_violation_is_repaired_through_a_repair_task(self):
        group = self.create_group(self.primary, [f'affinity:{self.scope}'],
                                  nova_policy='soft-affinity')
        servers = self.boot_many(self.primary, 2, group['id'])
        self.assertEqual(1, len({self.domain_of(self.found, self.host(s))
                                 for s in servers}))

        self.primary.groups.update_group(
            group['id'], policies=[self.policy])
        audit = self.primary.groups.audit_group(
            group['id'])['server_group_policy_audit']
        self.assertEqual(1, len(audit['violations']), audit)
        self.wait_for_policy_change()

        # the tenant's plan: its own server moves, in its own view
        mine = self.primary.repairs.plan_repair(
            server_group=group['id'])['repair']
        self.assertEqual('repaired', mine['status'], mine)
        self.assertEqual(1, len(mine['moves']))
        self.assertIn(mine['moves'][0]['server'], [s['id'] for s in servers])
        self.assertFalse(mine['needs_administrator'])

        # an administrator's, with real hosts, is the one applied
        plan = self.admin.repairs.plan_repair(
            server_group=group['id'])['repair']
        self.assertEqual('repaired', plan['status'], plan)
        self.assertEqual(1, len(plan['moves']))

        started = self.admin.repairs.apply_repair(
            plan['fingerprint'], plan['moves'], server_group=group['id'])
        task = started['task']
        self.assertTrue(started.response['location'].endswith(
            f'/repairs/tasks/{task["id"]}'))
        self.assertEqual(f'server_group {group["id"]}', task['target'])

        ended = self.wait_until(
            f'repair task {task["id"]}',
            lambda: self.admin.repairs.show_task(task['id'])['task'],
            lambda found: found['status'] != 'running')
        self.assertEqual('applied', ended['status'], ended)
        self.assertEqual(1, len(ended['done']))
        self.assertIn(task['id'], [t['id'] for t in
                                   self.admin.repairs.list_tasks()['tasks']])

        moved = [self.wait_for_server(s['id'], 'ACTIVE') for s in servers]
        self.assertEqual(2, len({self.domain_of(self.found, self.host(s))
                                 for s in moved}))
        audit = self.primary.groups.audit_group(
            group['id'])['server_group_policy_audit']
        self.assertEqual([], audit['violations'])
        again = self.admin.repairs.plan_repair(
            server_group=group['id'])['repair']
        self.assertEqual('nothing to do', again['status'])

        exc = self.assertRaises(lib_exc.Conflict,
                                self.admin.repairs.cancel_task, task['id'])
        self.assertDetail(exc, 'applied already')
