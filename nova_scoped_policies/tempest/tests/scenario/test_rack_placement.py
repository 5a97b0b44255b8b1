"""Servers booted through Nova land where their group's scoped policy
says, and a move that would break it is refused.

With ``anti-affinity:<scope>`` (``[scoped_policies] scope``, ``rack``
by default) the members of a group land one per domain; with
``max_server_per_<scope>: 1`` the member after one in every domain
finds "No valid host"; a live migration of a member into another's
domain is refused by nova-scheduler, while one within its own domain
goes. Skipped, saying why, on a cloud with fewer than two domains with
a compute host up, or without live migration.
"""

from tempest.lib import decorators

from nova_scoped_policies.tempest.tests import base


class RackPlacementTest(base.ScopedPoliciesTest):
    """Boots and moves of a group's members in the scope's domains."""

    domains_needed = 2

    def _group(self, rules=None):
        return self.create_group(self.primary, [self.policy], rules)

    @decorators.attr(type=['slow'])
    @decorators.idempotent_id('0aaf6223-a34c-4411-aa35-5ffc7f4b278a')
    def test_an_anti_affinity_group_lands_one_per_domain(self):
        count = min(len(self.found), 3)
        group = self._group()
        servers = self.boot_many(self.primary, count, group['id'])
        domains = [self.domain_of(self.found, self.host(s))
                   for s in servers]
        self.assertEqual(count, len(set(domains)), domains)
        audit = self.primary.groups.audit_group(
            group['id'])['server_group_policy_audit']
        self.assertEqual([], audit['violations'])
        self.assertEqual({s['id'] for s in servers},
                         {m['instance_id'] for m in audit['members']})

    @decorators.attr(type=['slow', 'negative'])
    @decorators.idempotent_id('b74c30c8-d6a7-45ce-88ba-753df38af46f')
    def test_one_member_too_many_finds_no_valid_host(self):
        count = len(self.found)
        group = self._group({f'max_server_per_{self.scope}': 1})
        servers = self.boot_many(self.primary, count, group['id'])
        self.assertEqual(count, len({self.domain_of(
            self.found, self.host(s)) for s in servers}))
        extra = self.boot(self.primary, group['id'], wait='ERROR')
        self.assertIn('No valid host', extra['fault']['message'])
        self.assertIsNone(extra.get('OS-EXT-SRV-ATTR:host'))

    @decorators.attr(type=['slow', 'negative'])
    @decorators.idempotent_id('d5a83604-985f-431d-bda4-f537f76d33e9')
    def test_a_live_migration_that_would_break_the_policy_is_refused(self):
        self.require_live_migration()
        group = self._group()
        first, second = self.boot_many(self.primary, 2, group['id'])
        source, taken = self.host(first), self.host(second)

        # within its own domain, if it has another host, the move goes:
        # live migration works here, and the refusal below is the policy's
        alone = self.found[self.domain_of(self.found, source)] - {source}
        if alone:
            target = sorted(alone)[0]
            self.admin.servers.live_migrate_server(
                first['id'], host=target, block_migration='auto')
            moved = self.wait_for_server(first['id'], 'ACTIVE')
            self.assertEqual(target, self.host(moved))
            source = target

        # into the other member's domain: nova-scheduler refuses it
        before = self._live_migrations(first['id'])
        self.admin.servers.live_migrate_server(
            first['id'], host=taken, block_migration='auto')
        migration = self.wait_until(
            f'the live migration of {first["id"]} to {taken} to end',
            lambda: self._live_migrations(first['id'])[len(before):],
            lambda found: found and found[0]['status'] in (
                'error', 'failed', 'completed', 'done'))[0]
        self.assertIn(migration['status'], ('error', 'failed'))
        server = self.wait_for_server(first['id'], 'ACTIVE')
        self.assertEqual(source, self.host(server))
        audit = self.primary.groups.audit_group(
            group['id'])['server_group_policy_audit']
        self.assertEqual([], audit['violations'])

    def _live_migrations(self, server_id):
        """The server's live migrations, oldest first."""
        found = self.admin.migrations.list_migrations(
            instance_uuid=server_id,
            migration_type='live-migration')['migrations']
        return sorted(found, key=lambda m: m['id'])
