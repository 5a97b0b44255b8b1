"""Members in flight: a failed build, an unreachable Placement.

**A build that fails on its host is not moved to a stale alternate.**

nova's scheduler returns alternate hosts with every selection; when the
build fails on the chosen host, nova-conductor claims the next alternate in
Placement itself, without calling the scheduler again. The alternates were
checked when the boot was scheduled, before the group's other members in
flight were placed, so for hard scoped policies they may be wrong by the
time of the retry. Nova's own host (anti-)affinity is re-checked on the
compute node; scoped policies have no such late check, so the scheduler
returns no alternates for groups with hard scoped policies (the failed
build goes to ERROR) and keeps them for every other boot.

2 racks of one host each, one ``anti-affinity:rack`` group: server A lands
on one rack, its spawn blocks until server B has gone ACTIVE in the other
rack, then fails. Its only alternate is B's rack.

**Placement does not answer** where a member in flight was claimed: boots
into a hard scoped group fail closed at once with a reason (one bounded
call, then the circuit breaker), a soft group's boots go on.
"""

import collections
import threading
import time

import fixtures
from keystoneauth1 import exceptions as ks_exc

from nova.virt import fake
from tests.functional import base


class _InFlight(base.ScopedPoliciesTestCase):
    """The first spawn of server ``failing`` blocks until ``fail_now``."""

    def setUp(self):
        super().setUp()
        self.failing = None  # the uuid whose first spawn fails
        self.spawning = threading.Event()
        self.fail_now = threading.Event()
        self.attempts = []
        real = fake.FakeDriver.spawn
        test = self

        def spawn(driver, context, instance, *args, **kwargs):
            if instance.uuid == test.failing:
                test.attempts.append(driver._host)
                if len(test.attempts) == 1:
                    test.spawning.set()
                    test.fail_now.wait(120)
                    raise RuntimeError('the hypervisor failed the build')
            return real(driver, context, instance, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.fake.FakeDriver.spawn', spawn))

    def _settle(self, server, states, max_retries):
        if isinstance(states, str):
            states = (states,)
        for _ in range(max_retries * 2):
            found = self.admin_api.get_server(server['id'])
            if found['status'] in states:
                return found
            time.sleep(0.25)
        self.fail(f'server {server["id"]} not in {states}: {found}')


class FailedBuildTest(_InFlight):

    RACKS = collections.OrderedDict([('rack-1', ['h1']),
                                     ('rack-2', ['h2'])])

    def _first_fails_after_second(self, policy, document):
        group = self._group(policy)
        first = self._post(group, document, name='a')
        self.failing = first['id']
        self.assertTrue(self.spawning.wait(120), 'A never spawned')
        second = self._post(group, document, name='b')
        second = self._settle(
            second, 'ACTIVE', base.WAIT_RETRIES)
        self.fail_now.set()
        first = self._settle(
            first, ('ACTIVE', 'ERROR'), base.WAIT_RETRIES)
        return first, second

    def test_hard_scoped_group_is_not_retried_on_a_stale_alternate(self):
        first, second = self._first_fails_after_second(
            'soft-anti-affinity', {'policies': ['anti-affinity:rack']})
        self.assertEqual('ACTIVE', second['status'])
        self.assertEqual(1, len(self.attempts), 'A was retried elsewhere')
        self.assertEqual('ERROR', first['status'])
        self.assertIn('Exhausted all hosts', first['fault']['message'])
        # nothing of A is left claimed
        self.assertEqual(
            {}, self.placement.get(
                f'/allocations/{first["id"]}').body['allocations'])

    def test_other_groups_keep_nova_reschedules(self):
        first, second = self._first_fails_after_second(
            'soft-anti-affinity', None)
        self.assertEqual('ACTIVE', first['status'])
        self.assertEqual(2, len(self.attempts))
        self.assertNotEqual(self.attempts[0], self.attempts[1])


class PlacementOutageTest(_InFlight):
    """Placement answers nova but not the scheduler's reads of members'
    claims, each read failing after 1 s as a connect timeout would (the
    compute nodes still reach it, so the member in flight stays put)."""

    OPTIONS = {'placement_retry_interval': 60}

    def _outage(self):
        calls = []

        class Down:
            def get_allocs_for_consumer(self, context, consumer):
                calls.append(consumer)
                time.sleep(1)
                raise ks_exc.ConnectFailure('connect timed out')
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.members.InFlightMemberLocator.'
            'client', property(lambda locator: Down())))
        return calls

    def _member_in_flight(self, policy, document):
        group = self._group(policy)
        first = self._post(group, document, name='a')
        self.failing = first['id']
        self.assertTrue(self.spawning.wait(120), 'A never spawned')
        self.addCleanup(self.fail_now.set)
        return group

    def test_hard_group_fails_closed_at_once(self):
        document = {'policies': ['anti-affinity:rack']}
        group = self._member_in_flight('soft-anti-affinity', document)
        calls = self._outage()
        started = time.monotonic()
        second = self._settle(self._post(group, document, name='b'),
                              ('ACTIVE', 'ERROR'), base.WAIT_RETRIES)
        first_took = time.monotonic() - started
        started = time.monotonic()
        third = self._settle(self._post(group, document, name='c'),
                             ('ACTIVE', 'ERROR'), base.WAIT_RETRIES)
        then_took = time.monotonic() - started
        for server in (second, third):
            self.assertEqual('ERROR', server['status'])
            self.assertIn('Placement did not', server['fault']['message'])
        # one bounded call; the breaker answers the next boot at once
        self.assertEqual(1, len(calls))
        self.assertLess(first_took, 10)
        self.assertLess(then_took, first_took)
        log = self.stdlog.logger.output
        self.assertEqual(1, log.count('Placement did not return the claims '
                                      'of group members in flight'))

    def test_soft_group_goes_on(self):
        document = {'policies': ['soft-anti-affinity:rack']}
        group = self._member_in_flight('soft-anti-affinity', document)
        self._outage()
        second = self._settle(self._post(group, document, name='b'),
                              ('ACTIVE', 'ERROR'), base.WAIT_RETRIES)
        self.assertEqual('ACTIVE', second['status'])
