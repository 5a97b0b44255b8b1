"""A stack's policies hold for its servers' whole life, in the real
nova-scheduler with the real Placement (stack-document.md, phase 5 "Live").

The stack is an HA application decided as "two clusters in two racks":
clusters ``c1`` and ``c2`` of two servers each, each cluster in one rack
(``affinity:rack``) on two hosts (``anti-affinity:host``), the clusters
apart (``anti-affinity:rack`` on the group of groups). Racks have three
hosts, so each cluster's rack keeps exactly one legal free host. The
servers boot from the decision (pinned); then every move — cold and live
migration with and without a target, evacuation, resize — is decided by
the scheduler against the stack's policies: it lands on the legal host,
or fails and leaves the server where it was. The negative control runs
the same moves with the stack's policies switched off: they break.
"""

import collections
import copy
import time

import fixtures

from nova.virt import fake

from nova.tests import fixtures as nova_fixtures
from nova_scoped_policies import nova_seam
from nova_scoped_policies.nova_seam import select_destinations
from nova_scoped_policies.scheduler import coordination
from nova_scoped_policies.scheduler import members
from nova_scoped_policies.scheduler import state
from tests.functional import base
from tests.functional import test_concurrency as concurrency
from tests.functional import test_stack_boots as stack_boots

TINY = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}   # nova's m1.tiny
CLUSTER = {'policies': ['affinity:rack', 'anti-affinity:host'],
           'servers': {'count': 2, 'flavor': {'resources': TINY}}}
HA = {'stack': {'name': 'ha', 'group': {
    'name': 'root', 'policies': ['anti-affinity:rack'],
    'members': [dict(CLUSTER, name='c1'), dict(CLUSTER, name='c2')]}}}
NAMES = ('c1-1', 'c1-2', 'c2-1', 'c2-2')


class HaStack(stack_boots.StackCloud):
    """Three racks of three hosts; the HA stack decided and booted."""

    RACKS = collections.OrderedDict(
        (f'rack-{r}', [f'h{r}{i}' for i in range(1, 4)])
        for r in range(1, 4))
    FLAVOR = 'm1.tiny'
    VERSION = 'scoped-policies 1.2'

    def setUp(self):
        super().setUp()
        self.decision = decision = self.decide(HA)
        self.servers = {name: self.boot(decision['hints'][name], name=name)
                        for name in NAMES}
        for name, server in self.servers.items():
            self.assertEqual(decision['servers'][name]['host'],
                             self.host_of(server), name)
        self.assertKept()

    # -- where things are --------------------------------------------------

    def hosts(self):
        return {name: self.host_of(self.admin_api.get_server(s['id']))
                for name, s in self.servers.items()}

    def broken(self):
        """The stack's policies the servers break now, in words."""
        hosts = self.hosts()
        racks = {c: {self.rack_of[hosts[f'{c}-{i}']] for i in (1, 2)}
                 for c in ('c1', 'c2')}
        found = []
        for cluster, used in racks.items():
            if len(used) != 1:
                found.append(f'{cluster} spans racks {sorted(used)}')
            if hosts[f'{cluster}-1'] == hosts[f'{cluster}-2']:
                found.append(f'{cluster} shares a host')
        if racks['c1'] & racks['c2']:
            found.append('c1 and c2 share a rack')
        return found

    def audit(self):
        """The policy API's audit of the stack (the tenant's view)."""
        return self.call('GET', f'/stacks/{self.decision["id"]}/audit')[
            'stack_audit']

    def assertKept(self):
        self.assertEqual([], self.broken(), self.hosts())
        audit = self.audit()
        self.assertEqual('ok', audit['status'], audit)

    def free_host(self, cluster):
        """The one host of the cluster's rack its servers leave free."""
        hosts = self.hosts()
        rack = self.rack_of[hosts[f'{cluster}-1']]
        (free,) = set(self.RACKS[rack]) - set(hosts.values())
        return free

    def other_rack_host(self, cluster):
        """A host in the other cluster's rack (illegal for ``cluster``)."""
        other = 'c2' if cluster == 'c1' else 'c1'
        return self.free_host(other)

    def assertStays(self, name, host, action):
        """The move failed in the scheduler and the server stayed."""
        server = self.servers[name]
        event = self._wait_for_action_fail_completion(
            server, action, 'conductor_migrate_server'
            if action == 'migrate' else 'conductor_live_migrate_instance')
        self.assertIn('NoValidHost', event.get('traceback') or str(event))
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual(host, self.host_of(server))
        self.assertKept()


class StackLifetimeTest(HaStack):

    def test_cold_migration_goes_to_the_legal_host(self):
        legal = self.free_host('c1')
        server = self._migrate_server(self.servers['c1-1'],
                                      api=self.admin_api)
        self.assertEqual(legal, self.host_of(server))
        self._confirm_resize(server)
        self.assertKept()

    def test_cold_migration_to_an_illegal_target_fails_and_stays(self):
        source = self.hosts()['c1-1']
        self.admin_api.post_server_action(
            self.servers['c1-1']['id'],
            {'migrate': {'host': self.other_rack_host('c1')}})
        self.assertStays('c1-1', source, 'migrate')

    def test_live_migration_with_and_without_a_target(self):
        legal = self.free_host('c2')
        server = self._live_migrate(self.servers['c2-1'],
                                    api=self.admin_api)
        self.assertEqual(legal, self.host_of(server))
        self.assertKept()
        # a target in the other cluster's rack: refused, the server stays
        source = self.hosts()['c2-2']
        self.admin_api.post_server_action(
            self.servers['c2-2']['id'],
            {'os-migrateLive': {'host': self.other_rack_host('c2'),
                                'block_migration': 'auto'}})
        self._wait_for_migration_status(self.servers['c2-2'], ['error'])
        server = self._wait_for_state_change(self.servers['c2-2'],
                                             'ACTIVE')
        self.assertEqual(source, self.host_of(server))
        # a legal target: the host c2-1 left
        legal = self.free_host('c2')
        server = self._live_migrate(self.servers['c2-2'],
                                    api=self.admin_api, host=legal)
        self.assertEqual(legal, self.host_of(server))
        self.assertKept()

    def test_evacuation_keeps_the_clusters_apart(self):
        source = self.hosts()['c2-1']
        legal = self.free_host('c2')
        self.computes[source].stop()
        service = self.admin_api.get_services(
            host=source, binary='nova-compute')[0]['id']
        self.admin_api.put_service(service, {'forced_down': 'true'})
        server = self._evacuate_server(self.servers['c2-1'],
                                       expected_state='ACTIVE')
        self.assertEqual(legal, self.host_of(server))
        self.assertKept()

    def test_resize_keeps_every_policy(self):
        legal = self.free_host('c1')
        small = next(f['id'] for f in self.api.get_flavors()
                     if f['name'] == 'm1.small')
        self.admin_api.post_server_action(
            self.servers['c1-2']['id'], {'resize': {'flavorRef': small}})
        server = self._wait_for_state_change(self.servers['c1-2'],
                                             'VERIFY_RESIZE')
        self.assertEqual(legal, self.host_of(server))
        self.admin_api.post_server_action(server['id'],
                                          {'confirmResize': None})
        self._wait_for_state_change(server, 'ACTIVE')
        self.assertKept()

    def test_a_move_notifies_the_violation_it_finds(self):
        # the stack broken behind the scheduler's back (its policies off
        # for one move), then a move of another server finds it broken
        target = self.other_rack_host('c1')
        with fixtures.MonkeyPatch(
                'nova_scoped_policies.scheduler.state.RequestStates._stack',
                lambda states, context, spec, topology: ()):
            self._migrate_server(self.servers['c1-1'], host=target,
                                 api=self.admin_api)
        notifier = self.useFixture(nova_fixtures.NotificationFixture(self))
        self.admin_api.post_server_action(self.servers['c2-1']['id'],
                                          {'migrate': None})
        (sent,) = notifier.wait_for_versioned_notifications(
            'scoped_policy.violation')
        data = sent['payload']['nova_scoped_policies_object.data']
        self.assertEqual(('stack', self.decision['id']),
                         (data['kind'], data['id']))
        self.assertTrue(any('anti-affinity:rack' in v
                            for v in data['violations']), data)

    def test_unshelve_keeps_every_policy(self):
        self._shelve_server(self.servers['c1-1'])
        server = self._unshelve_server(self.servers['c1-1'])
        self.assertKept()
        # to a named host (2.91) in the other cluster's rack: refused, the
        # server stays offloaded
        self._shelve_server(server)
        self.admin_api.microversion = '2.91'
        self.admin_api.post_server_action(
            server['id'], {'unshelve': {'host': self.other_rack_host('c1')}})
        server = self._wait_for_server_parameter(
            server, {'status': 'SHELVED_OFFLOADED',
                     'OS-EXT-STS:task_state': None})
        self.assertIsNone(self.host_of(server))
        newest = self.admin_api.get_instance_actions(server['id'])[0]
        self.assertEqual(('unshelve', 'Error'),
                         (newest['action'], newest['message']))
        # to a named legal host (c1's rack, not c1-2's host): it goes there
        beside = self.hosts()['c1-2']
        legal = next(h for h in self.RACKS[self.rack_of[beside]]
                     if h != beside)
        self.admin_api.post_server_action(
            server['id'], {'unshelve': {'host': legal}})
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual(legal, self.host_of(server))
        self.assertKept()

    def test_a_move_no_host_allows_fails_with_the_reason(self):
        # the one legal host of c1's rack leaves the rack: c1-1 has no
        # legal host left
        free = self.free_host('c1')
        rack = next(a for a in self.admin_api.api_get(
            '/os-aggregates').body['aggregates']
            if a['name'] == self.rack_of[free])
        self.admin_api.remove_host_from_aggregate(rack['id'], free)
        source = self.hosts()['c1-1']
        self.admin_api.post_server_action(self.servers['c1-1']['id'],
                                          {'migrate': None})
        self.assertStays('c1-1', source, 'migrate')
        # the reason names policies and counts, never a host
        log = self.stdlog.logger.output
        reason = next(line for line in log.splitlines()
                      if 'No valid host for' in line)
        self.assertIn('scoped policies: affinity:rack: ', reason)
        self.assertNotIn(free, reason.split('scoped policies: ')[1])


class StackPoliciesOffTest(HaStack):
    """The negative control: the same cloud and stack, with the scheduler
    blind to the stack's policies after the decision. Moves break them, so
    the tests above can fail."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.state.RequestStates._stack',
            lambda states, context, spec, topology: ()))
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.state.STATES',
            state.RequestStates()))

    def test_a_move_to_an_illegal_target_breaks_the_stack(self):
        target = self.other_rack_host('c1')
        server = self._migrate_server(self.servers['c1-1'], host=target,
                                      api=self.admin_api)
        self.assertEqual(target, self.host_of(server))
        self.assertIn('c1 and c2 share a rack', self.broken())
        self.assertIn('c1 spans racks', ' '.join(self.broken()))
        # the audit of the stack sees both, in the tenant's words
        audit = self.audit()
        self.assertEqual('violated', audit['status'])
        self.assertEqual(
            [('stack.group', 'across', 'violated'),
             ('stack.group.members[0]', 'group', 'violated'),
             ('stack.group.members[1]', 'group', 'ok')],
            [(p['field'], p['kind'], p['status'])
             for p in audit['policies']], audit)
        self.assertNotIn(target, str(audit))


SPREAD = {'stack': {'name': 'spread', 'group': {
    'name': 'w', 'policies': ['anti-affinity:rack'],
    'servers': {'count': 4, 'flavor': {'resources': TINY}}}}}


class StackMovesRaceTest(stack_boots.StackCloud):
    """Moves racing boots of the same stack, two schedulers.

    Casts stay casts (a POST returns before its server is scheduled, as in
    production), two schedulers share no memory of ours
    (:func:`test_concurrency.two_schedulers`, Placement 0.3 s late) and the
    lock is in Redis. Each round decides a stack of four servers, one per
    rack (``anti-affinity:rack``, five racks of one host), boots two, then
    at once boots the other two (pinned) while live-migrating the first
    and cold-migrating the second (the scheduler picks their hosts). The
    one legal destination is the fifth rack: a mover must count the
    servers held for the boots at their decided hosts, and the other
    mover on its destination before its host changes. Every boot
    succeeds, one move succeeds and the other fails (the server stays),
    and no rack ever holds two.

    The hypervisor takes :attr:`MOVE_SECONDS` to move a server (nova's
    fake driver made to wait), so one mover is still on its way while the
    next request of the stack is scheduled, as with real disks and memory
    to copy.
    """

    MOVE_SECONDS = 1.5

    RACKS = collections.OrderedDict(
        (f'rack-{r}', [f'h{r}']) for r in range(1, 6))
    FLAVOR = 'm1.tiny'
    OPTIONS = {'coordination_backend_url': concurrency.REDIS_URL}
    ROUNDS = 3

    def setUp(self):
        concurrency._redis_or_fail()
        super().setUp()
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')
        self.addCleanup(coordination.reset)
        self.addCleanup(nova_seam.uninstall)
        # installed by nova-scheduler when it started (the nova seam)
        self.assertTrue(select_destinations.installed())
        concurrency.two_schedulers(self, 0.3)
        for name in ('migrate_disk_and_power_off', 'live_migration'):
            self.useFixture(fixtures.MonkeyPatch(
                f'nova.virt.fake.FakeDriver.{name}',
                self._slow(getattr(fake.FakeDriver, name))))

    def _slow(self, move):
        def slow(driver, *args, **kwargs):
            time.sleep(self.MOVE_SECONDS)
            return move(driver, *args, **kwargs)
        return slow

    def _migration(self, server, statuses):
        deadline = time.monotonic() + concurrency.TIMEOUT
        while time.monotonic() < deadline:
            for found in self.admin_api.api_get(
                    '/os-migrations').body['migrations']:
                if found['instance_uuid'] == server['id'] and \
                        found['status'] in statuses:
                    return found['status']
            time.sleep(0.2)
        self.fail(f'{server["name"]}: no migration {statuses} after '
                  f'{concurrency.TIMEOUT} s')

    def _round(self, n):
        document = copy.deepcopy(SPREAD)
        document['stack']['name'] = f'spread-{n}'
        decision = self.decide(document)
        hints = decision['hints']
        first = [self.boot(hints[f'w-{i}'], name=f'w-{i}') for i in (1, 2)]
        later = []
        for i in (3, 4):
            server = self._build_server(
                name=f'w-{i}', image_uuid=base.IMAGE, flavor_id=self.flavor,
                networks='none')
            later.append(self.api.post_server(
                {'server': server, 'os:scheduler_hints': hints[f'w-{i}']}))
        self.admin_api.post_server_action(first[0]['id'], {
            'os-migrateLive': {'host': None, 'block_migration': 'auto'}})
        self.admin_api.post_server_action(first[1]['id'], {'migrate': None})
        booted = concurrency.settle(self.admin_api.get_server,
                                    [s['id'] for s in later],
                                    concurrency.TIMEOUT)
        moved = [self._migration(first[0], ('completed', 'error')),
                 self._migration(first[1], ('finished', 'error'))]
        if moved[1] == 'finished':
            server = self._wait_for_state_change(first[1], 'VERIFY_RESIZE')
            self.admin_api.post_server_action(server['id'],
                                              {'confirmResize': None})
        servers = [self._wait_for_state_change(s, 'ACTIVE')
                   for s in first] + booted
        return moved, servers

    def broken_rounds(self):
        """Run the rounds; the placements of those where a rack held two
        servers of the stack."""
        stories = []
        for n in range(self.ROUNDS):
            moved, servers = self._round(n)
            hosts = {s['name']: self.host_of(s) for s in servers}
            racks = collections.Counter(self.rack_of[h]
                                        for h in hosts.values())
            self.assertEqual(['ACTIVE'] * 4,
                             [s['status'] for s in servers], hosts)
            if max(racks.values()) > 1:
                stories.append(f'{moved} {hosts}')
            else:
                self.assertEqual(1, len({'completed', 'finished'} &
                                        set(moved)), (moved, hosts))
        return stories

    def test_moves_racing_boots_keep_the_stack(self):
        self.assertEqual([], self.broken_rounds(),
                         'a rack held two servers of the stack')


class StackMovesRaceBlindToMovesTest(StackMovesRaceTest):
    """The negative control of the race: the scheduler does not see where
    a server of the stack is moving to (only its host, which changes when
    the move ends). Both movers then take the one free rack."""

    ROUNDS = 2

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.sources.Sources.claims',
            lambda sources, context, uuids: {}))

    def test_moves_racing_boots_keep_the_stack(self):
        self.assertNotEqual([], self.broken_rounds())


class StackNeighbourTest(stack_boots.StackCloud):
    """A stack's relationship to a server that existed before it holds
    when the stack's server moves: the scheduler reads where the existing
    server is, as the decision did."""

    RACKS = collections.OrderedDict(
        (f'rack-{r}', [f'h{r}1', f'h{r}2']) for r in range(1, 4))
    FLAVOR = 'm1.tiny'

    def _beside_neighbour(self, policy):
        """Server w-1 of a stack related by ``policy`` to server db,
        which existed before it on h31, booted from its decision."""
        neighbour = self._boot(None, host='h31', flavor=self.flavor,
                               name='db')[0]
        decision = self.decide({'stack': {
            'name': 'web',
            'group': {'name': 'w', 'servers': {
                'count': 1, 'flavor': {'resources': TINY}}},
            'relationships': [{'from': 'w', 'to': {'server': neighbour['id']},
                               'policies': [policy]}]}})
        return self.boot(decision['hints']['w-1'], name='w-1')

    def test_a_move_keeps_away_from_an_existing_server(self):
        server = self._beside_neighbour('anti-affinity:rack')
        self.assertNotEqual('rack-3', self.rack_of[self.host_of(server)])
        source = self.host_of(server)
        self.admin_api.post_server_action(server['id'],
                                          {'migrate': {'host': 'h32'}})
        self._wait_for_action_fail_completion(server, 'migrate',
                                              'conductor_migrate_server')
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual(source, self.host_of(server))
        # a host outside the neighbour's rack is fine
        target = next(h for h in ('h11', 'h12', 'h21', 'h22')
                      if h != source)
        server = self._migrate_server(server, host=target,
                                      api=self.admin_api)
        self.assertEqual(target, self.host_of(server))

    def _unreadable_neighbour(self, policy):
        """A stack related to an existing server by ``policy``, whose
        server moves while where that server runs cannot be read."""
        server = self._beside_neighbour(policy)

        def unreadable(sources, context, servers, groups):
            raise members.MemberLookupError('Placement did not answer')
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.sources.Sources.'
            'relationship_ends', unreadable))
        self.admin_api.post_server_action(server['id'], {'migrate': None})
        return server

    def test_a_soft_relationship_weighs_without_what_cannot_be_read(self):
        server = self._unreadable_neighbour('soft-anti-affinity:rack')
        source = self.host_of(server)
        server = self._wait_for_state_change(server, 'VERIFY_RESIZE')
        self.assertNotEqual(source, self.host_of(server))

    def test_a_hard_relationship_fails_closed(self):
        server = self._unreadable_neighbour('anti-affinity:rack')
        source = self.host_of(server)
        self._wait_for_action_fail_completion(server, 'migrate',
                                              'conductor_migrate_server')
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual(source, self.host_of(server))
