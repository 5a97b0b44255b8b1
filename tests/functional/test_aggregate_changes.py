"""Aggregate changes apply at once, with a refresh interval of an hour.

nova-api casts every aggregate change to the schedulers; our cache is
marked stale by it (scheduler/aggregate_events.py) and reloads once.
"""

import threading
import time

import fixtures

from nova.scheduler.client import query
from nova_scoped_policies.scheduler import aggregate_events
from nova_scoped_policies.scheduler import state
from tests.functional import base

# the casts are asynchronous: on a loaded machine they may take seconds
CAST_TIMEOUT = 60

RESERVED = 'CUSTOM_RESERVED'


class AggregateChangesTest(base.ScopedPoliciesTestCase):

    OPTIONS = {'enable_forbidden_aggregates_filter': True,
               'enable_scoped_policy_query_filter': True}

    def setUp(self):
        # count the aggregate casts nova-api sends and those our scheduler
        # side has handled, from the first aggregate on (one scheduler
        # runs: each fanout cast is handled once)
        self._casts = {'sent': 0, 'handled': 0}
        self._casts_lock = threading.Lock()
        for name in ('update_aggregates', 'delete_aggregate'):
            self.useFixture(fixtures.MonkeyPatch(
                f'nova.scheduler.client.query.SchedulerQueryClient.{name}',
                self._counting('sent', getattr(
                    query.SchedulerQueryClient, name))))
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.state.RequestStates.'
            'aggregates_changed',
            self._counting('handled',
                           state.RequestStates.aggregates_changed)))
        super().setUp()
        self.addCleanup(aggregate_events.uninstall)
        # Only nova's cast may refresh the cache during the test.
        self.flags(aggregate_refresh_interval=3600, group='scoped_policies')
        self._boot(None, name='warm-up')  # loads the cache

    def _counting(self, kind, method):
        def counted(*args, **kwargs):
            try:
                return method(*args, **kwargs)
            finally:
                self._count(kind)
        return counted

    def _count(self, kind):
        with self._casts_lock:
            self._casts[kind] += 1

    def _settle_casts(self):
        """Wait until the scheduler has handled every aggregate cast sent
        so far (they are asynchronous)."""
        deadline = time.monotonic() + CAST_TIMEOUT
        while time.monotonic() < deadline:
            with self._casts_lock:
                if self._casts['handled'] >= self._casts['sent']:
                    return
            time.sleep(0.05)
        self.fail(f'the scheduler handled {self._casts["handled"]} of '
                  f'{self._casts["sent"]} aggregate casts in '
                  f'{CAST_TIMEOUT} s')

    def test_trait_required_applies_to_the_next_boot(self):
        rack1 = self.admin_api.api_get('/os-aggregates').body[
            'aggregates'][0]
        self.assertEqual('rack-1', rack1['name'])
        self.admin_api.post_aggregate_action(rack1['id'], {
            'set_metadata': {'metadata': {f'trait:{RESERVED}': 'required'}}})
        self._settle_casts()
        for i in range(6):
            server = self._boot(None, name=f'plain-{i}')[0]
            self.assertNotIn(self.host_of(server), self.RACKS['rack-1'])

    def test_recreated_domains_serve_the_next_boot(self):
        for agg in self.admin_api.api_get('/os-aggregates').body[
                'aggregates']:
            for host in agg['hosts']:
                self.admin_api.remove_host_from_aggregate(agg['id'], host)
            self.admin_api.delete_aggregate(agg['id'])
        for rack, hosts in self.RACKS.items():
            self._make_domain(rack, 'rack', hosts)
        self._settle_casts()
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['affinity:rack']}
        servers = [self._boot(group, doc, name=f'a{i}')[0]
                   for i in range(2)]
        self.assertEqual(1, len(self.racks_of(servers)))
