"""Hard scoped policies under concurrent boots, in the real nova-scheduler.

``POST /servers`` returns before the server is scheduled (casts stay casts:
our base case does not use nova's CastAsCall fixture), so the boots of one
round are scheduled while the others are in flight. The serialisation point
is a tooz lock in the Redis server on 127.0.0.1 ([scoped_policies]
coordination_backend_url), the members in flight are read from Placement.

Every round fires the boots of several fresh groups back to back and waits
until each server is ACTIVE or ERROR; then no group may break its policy
(0 violations) and at least 90% of the boots that fit must be ACTIVE.
"""

import collections
import itertools
import threading
import time

import fixtures
import redis

from nova.scheduler.client import report
from nova.scheduler import manager as sched_manager
from nova_scoped_policies import nova_seam
from nova_scoped_policies.nova_seam import select_destinations
from nova_scoped_policies.scheduler import coordination
from nova_scoped_policies.scheduler import state
from tests.functional import base

REDIS_URL = 'redis://127.0.0.1:6379'
TIMEOUT = 120


def _redis_or_fail():
    try:
        redis.Redis.from_url(REDIS_URL, socket_timeout=2).ping()
    except redis.RedisError as exc:  # never skip silently
        raise AssertionError(f'Redis on {REDIS_URL} is needed: {exc}')


def settle(get_server, ids, timeout, poll=0.1):
    """Wait until every server is ACTIVE or ERROR; return the servers.

    :param get_server: server id -> the server as the API shows it.
    """
    deadline = time.monotonic() + timeout
    done = {}
    while len(done) < len(ids):
        assert time.monotonic() < deadline, (
            f'servers still building after {timeout} s')
        for sid in ids:
            if sid not in done:
                server = get_server(sid)
                if server['status'] in ('ACTIVE', 'ERROR'):
                    done[sid] = server
        time.sleep(poll)
    return [done[sid] for sid in ids]


def two_schedulers(test, latency):
    """Make ``test``'s nova-scheduler two: two scheduler managers (each
    its own HostManager) take turns on the scheduler's RPC calls, each
    with its own request states (caches of documents, members,
    aggregates) and its own tooz coordinator (its own Redis connection
    and member id), as two nova-scheduler processes would; Placement
    answers allocation candidates ``latency`` seconds late so that their
    decisions interleave."""
    scheduler = test.scheduler.manager
    second = sched_manager.SchedulerManager()
    managers = itertools.cycle([scheduler, second])
    unbound = sched_manager.SchedulerManager.select_destinations

    own = {}
    for manager in (scheduler, second):
        memory = own[id(manager)] = (
            state.RequestStates(), coordination.Coordinator(REDIS_URL))
        test.addCleanup(memory[1].stop)
    current = threading.local()

    def take_turns(*args, **kwargs):
        manager = next(managers)
        current.memory = own[id(manager)]
        try:
            return unbound(manager, *args, **kwargs)
        finally:
            current.memory = None

    def memory(index, default):
        found = getattr(current, 'memory', None)
        return found[index] if found else default()

    test.useFixture(fixtures.MonkeyPatch(
        'nova_scoped_policies.scheduler.state.states',
        lambda: memory(0, lambda: state.STATES)))
    real_coordinator = coordination.coordinator
    test.useFixture(fixtures.MonkeyPatch(
        'nova_scoped_policies.scheduler.coordination.coordinator',
        lambda: memory(1, real_coordinator)))
    scheduler.select_destinations = take_turns
    real = report.SchedulerReportClient.get_allocation_candidates

    def slow(client, *args, **kwargs):
        result = real(client, *args, **kwargs)
        time.sleep(latency)
        return result

    test.useFixture(fixtures.MonkeyPatch(
        'nova.scheduler.client.report.SchedulerReportClient.'
        'get_allocation_candidates', slow))


class Case(collections.namedtuple('Case', 'name document size check')):
    """One kind of group: its hint, boots per group, and the verdict."""


def _anti_affinity(test, hosts):
    racks = collections.Counter(test.rack_of[h] for h in hosts)
    return not racks or max(racks.values()) <= 1


def _max_two(test, hosts):
    racks = collections.Counter(test.rack_of[h] for h in hosts)
    return not racks or max(racks.values()) <= 2


def _affinity(test, hosts):
    return len({test.rack_of[h] for h in hosts}) <= 1


def _llmn(test, hosts):
    return _max_two(test, hosts) and len(set(hosts)) == len(hosts)


CASES = [
    Case('anti-affinity:rack', {'policies': ['anti-affinity:rack']}, 4,
         _anti_affinity),
    Case('max_server_per_rack', {'policies': ['anti-affinity:rack'],
                                 'rules': {'max_server_per_rack': 2}}, 8,
         _max_two),
    Case('affinity:rack', {'policies': ['affinity:rack']}, 3, _affinity),
    Case('llmn', {'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
                  'rules': {'size': 4}}, 4, _llmn),
]


class ConcurrentBootsTest(base.ScopedPoliciesTestCase):
    """4 racks x 3 hosts; one scheduler."""

    RACKS = collections.OrderedDict(
        (f'rack-{r}', [f'h{r}{i}' for i in range(1, 4)])
        for r in range(1, 5))
    OPTIONS = {'coordination_backend_url': REDIS_URL}
    # boots per case: at least 200 over the cases for one scheduler
    BOOTS_PER_CASE = 52
    GROUPS_PER_ROUND = 4

    def setUp(self):
        _redis_or_fail()
        super().setUp()
        self.flags(server_groups=-1, instances=-1, cores=-1, ram=-1,
                   group='quota')
        self.addCleanup(coordination.reset)
        self.addCleanup(nova_seam.uninstall)
        # installed by nova-scheduler when it started (the nova seam)
        self.assertTrue(select_destinations.installed())

    def _fire(self, case):
        """Create a group and POST its boots; return (group, ids)."""
        group = self._group('soft-anti-affinity')
        ids = []
        for i in range(case.size):
            ids.append(self._post(group, case.document,
                                  name=f'{case.name}-{i}')['id'])
        return group, ids

    def _settle(self, ids):
        return settle(self.admin_api.get_server, ids, TIMEOUT)

    def _story(self, servers):
        """Where each member went and how many builds nova retried, for
        the message of a violation."""
        log = self.stdlog.logger.output
        return '; '.join(
            f'{s["id"][:8]} {s["status"]} on {self.host_of(s)} '
            f'({self.rack_of.get(self.host_of(s))}), '
            f'{log.count(s["id"] + " was re-scheduled")} reschedules'
            for s in servers)

    def _run(self, case):
        boots = violations = active = 0
        stories = []
        per_round = case.size * self.GROUPS_PER_ROUND
        rounds = -(-self.BOOTS_PER_CASE // per_round)
        for _ in range(rounds):
            fired = [self._fire(case)
                     for _ in range(self.GROUPS_PER_ROUND)]
            for group, ids in fired:
                servers = self._settle(ids)
                hosts = [self.host_of(s) for s in servers
                         if s['status'] == 'ACTIVE']
                boots += len(servers)
                active += len(hosts)
                if not case.check(self, hosts):
                    violations += 1
                    stories.append(self._story(servers))
        self.broken = stories
        return boots, violations, active

    def _assert_hard(self, case):
        boots, violations, active = self._run(case)
        self.assertGreaterEqual(boots, self.BOOTS_PER_CASE)
        self.assertGreaterEqual(active / boots, 0.9,
                                f'{case.name}: {active} of {boots} ACTIVE')
        self.assertEqual(0, violations,
                         f'{case.name}: {violations} groups broke their '
                         f'policy in {boots} boots: ' + ' | '.join(
                             self.broken))

    def test_anti_affinity_rack(self):
        self._assert_hard(CASES[0])

    def test_max_server_per_rack(self):
        self._assert_hard(CASES[1])

    def test_affinity_rack(self):
        self._assert_hard(CASES[2])

    def test_llmn(self):
        self._assert_hard(CASES[3])


class TwoSchedulersTest(ConcurrentBootsTest):
    """Two schedulers sharing no memory of ours (:func:`two_schedulers`);
    Placement answers allocation candidates 0.3 s late."""

    BOOTS_PER_CASE = 24
    LATENCY = 0.3

    def setUp(self):
        super().setUp()
        two_schedulers(self, self.LATENCY)


class OneSchedulerWithoutBackendTest(ConcurrentBootsTest):
    """The default: no coordination backend; one scheduler process is
    serialised by its own per-group locks."""

    OPTIONS = {}
    BOOTS_PER_CASE = 24


HOLDER = '''
import sys, time
from tooz import coordination
url, name, seconds = sys.argv[1], sys.argv[2].encode(), float(sys.argv[3])
coord = coordination.get_coordinator(url, b'another-scheduler-process')
coord.start(start_heart=True)
lock = coord.get_lock(name)
assert lock.acquire(blocking=True)
print('held', flush=True)
time.sleep(seconds)
released = time.time()
lock.release()
print(f'released {released!r}', flush=True)
coord.stop()
'''


class LockInAnotherProcessTest(base.ScopedPoliciesTestCase):
    """The serialisation point lives outside the scheduler process: while
    another OS process (standing in for a second nova-scheduler, sharing no
    memory with this one) holds a group's lock in Redis, a boot into that
    group is not scheduled; it is, as soon as the lock is released."""

    OPTIONS = {'coordination_backend_url': REDIS_URL}

    def setUp(self):
        _redis_or_fail()
        super().setUp()
        self.addCleanup(coordination.reset)
        self.addCleanup(nova_seam.uninstall)
        # installed by nova-scheduler when it started (the nova seam)
        self.assertTrue(select_destinations.installed())

    def test_a_boot_waits_for_the_lock_another_process_holds(self):
        import subprocess
        import sys
        group = self._group('soft-anti-affinity')
        holder = subprocess.Popen(
            [sys.executable, '-c', HOLDER, REDIS_URL,
             (coordination.LOCK_PREFIX + group['id'].encode()).decode(),
             '3'], stdout=subprocess.PIPE, text=True)
        self.addCleanup(holder.wait, 30)
        self.assertEqual('held', holder.stdout.readline().strip())
        claimed = []
        real = report.SchedulerReportClient.claim_resources

        def claim(client, ctxt, consumer, *args, **kwargs):
            claimed.append(time.time())
            return real(client, ctxt, consumer, *args, **kwargs)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'claim_resources', claim))
        created = self._post(group, {'policies': ['anti-affinity:rack']},
                             name='waits')
        released = float(holder.stdout.readline().split()[1])
        self._wait_for_state_change(created, 'ACTIVE')
        self.assertEqual(1, len(claimed))
        self.assertGreaterEqual(claimed[0], released)
