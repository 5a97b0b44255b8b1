"""Aggregate changes apply at once, with a refresh interval of an hour.

With a listener: nova-api emits a versioned notification for every
aggregate change; the nova seam's listener marks our cache stale on each,
and it reloads once (nova_seam/aggregates.py). nova's in-process harness
keeps notifications in memory instead of sending them (nova's
NotificationFixture): here every versioned notification nova records is
handed, in the emitting thread, to the endpoint the listener would call,
and the cache is told a listener keeps it fresh.
tests/functional/test_aggregate_notifications.py runs the real listener on
RabbitMQ, against separate nova processes.

Without one (:class:`WithoutListenerTest`): the forbidden-aggregates
filter reads the aggregates' ``trait:`` metadata for every request, and
the host filters compare the candidates' aggregates in nova-scheduler's
own view (``HostState.aggregates``) with the cached copy.
"""

import fixtures

from nova import context as nova_context
from nova.tests import fixtures as nova_fixtures
from nova.tests.fixtures import notifications as nova_notifications
from nova_scoped_policies.nova_seam import aggregates
from nova_scoped_policies.scheduler import state
from tests.functional import base

RESERVED = 'CUSTOM_RESERVED'


class AggregateChangesTest(base.ScopedPoliciesTestCase):

    OPTIONS = {'enable_forbidden_aggregates_filter': True,
               'enable_scoped_policy_query_filter': True}

    def setUp(self):
        self.endpoint = aggregates.AggregateEvents()
        recorded = nova_notifications.FakeVersionedNotifier._notify
        endpoint = self.endpoint

        def notify(notifier, priority, ctxt, event_type, payload):
            recorded(notifier, priority, ctxt, event_type, payload)
            if endpoint.filter_rule.match(ctxt, notifier.publisher_id,
                                          event_type, {}, payload):
                endpoint.info(ctxt, notifier.publisher_id, event_type,
                              payload, {})

        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.notifications.FakeVersionedNotifier.'
            '_notify', notify))
        # the endpoint stands for a listener bound to its queue
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.nova_seam.aggregates_listened',
            lambda: True))
        super().setUp()
        # nova's versioned notifications into nova's in-memory notifier
        self.useFixture(nova_fixtures.NotificationFixture(self))
        # Only nova's notifications may refresh the cache during the test.
        self.flags(aggregate_refresh_interval=3600, group='scoped_policies')
        self._boot(None, name='warm-up')  # loads the cache

    def test_trait_required_applies_to_the_next_boot(self):
        rack1 = self.admin_api.api_get('/os-aggregates').body[
            'aggregates'][0]
        self.assertEqual('rack-1', rack1['name'])
        seen = self.endpoint.received
        self.admin_api.post_aggregate_action(rack1['id'], {
            'set_metadata': {'metadata': {f'trait:{RESERVED}': 'required'}}})
        self.assertEqual(seen + 1, self.endpoint.received)
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
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['affinity:rack']}
        servers = [self._boot(group, doc, name=f'a{i}')[0]
                   for i in range(2)]
        self.assertEqual(1, len(self.racks_of(servers)))

    def test_without_the_notifications_the_cache_waits_for_the_interval(
            self):
        """The control: the same change, with the endpoint silent, is
        not seen by the next boots (the refresh interval is an hour)."""
        cache = state.states().sources.aggregates
        admin = nova_context.get_admin_context()
        loaded = cache.traits(admin)
        self.endpoint._changed = lambda: None
        rack1 = self.admin_api.api_get('/os-aggregates').body[
            'aggregates'][0]
        self.admin_api.post_aggregate_action(rack1['id'], {
            'set_metadata': {'metadata': {f'trait:{RESERVED}': 'required'}}})
        self._boot(None, name='plain')
        self.assertIs(loaded, cache.traits(admin))
        # and with the endpoint back, the next change reloads it
        self.endpoint._changed = None
        self.admin_api.post_aggregate_action(rack1['id'], {
            'set_metadata': {'metadata': {'other': 'x'}}})
        self.assertIsNot(loaded, cache.traits(admin))


class WithoutListenerTest(base.ScopedPoliciesTestCase):
    """No listener, a refresh interval of an hour, no notification
    handed anywhere: nothing tells the cache of a change. The query
    filter is off: Placement, whose aggregates nova-api changes at once,
    would otherwise keep a moved host out of a full rack by itself."""

    OPTIONS = {'enable_forbidden_aggregates_filter': True}

    def setUp(self):
        super().setUp()
        self.flags(aggregate_refresh_interval=3600, group='scoped_policies')
        self.cache = state.states().sources.aggregates
        self.assertTrue(self.cache.per_request)
        self._boot(None, name='warm-up')  # loads the cache

    def _aggregate(self, name):
        return next(a for a in self.admin_api.api_get(
            '/os-aggregates').body['aggregates'] if a['name'] == name)

    def test_trait_required_applies_to_the_next_boot(self):
        admin = nova_context.get_admin_context()
        cached = self.cache._snapshot(admin)[1]
        self.admin_api.post_aggregate_action(self._aggregate('rack-1')['id'], {
            'set_metadata': {'metadata': {f'trait:{RESERVED}': 'required'}}})
        for i in range(6):
            server = self._boot(None, name=f'plain-{i}')[0]
            self.assertNotIn(self.host_of(server), self.RACKS['rack-1'])
        # the cached copy still knows no reservation: the filter read it
        self.assertEqual({}, dict(cached.required))
        self.assertIs(cached, self.cache._snapshot(admin)[1])

    def test_a_host_moved_between_racks_counts_in_its_new_rack(self):
        """h3 moves from rack-2 to rack-1, where the group's first member
        runs: nova-scheduler's HostState.aggregates says so at once, the
        cached copy would for an hour."""
        group = self._group()
        doc = {'policies': ['anti-affinity:rack']}
        first = self._boot(group, doc, name='first', host='h1')[0]
        self.assertEqual('h1', self.host_of(first))
        admin = nova_context.get_admin_context()
        stale = self.cache.get(admin)
        rack1, rack2 = self._aggregate('rack-1'), self._aggregate('rack-2')
        self.admin_api.remove_host_from_aggregate(rack2['id'], 'h3')
        self.admin_api.add_host_to_aggregate(rack1['id'], 'h3')
        self.assertEqual((rack2['uuid'],), stale.domains_of('rack', 'h3'))
        refused = self._boot(group, doc, name='second', host='h3',
                             expected='ERROR')[0]
        self.assertIn('No valid host', refused['fault']['message'])
        fresh = self.cache.get(admin)
        self.assertIsNot(stale, fresh)
        self.assertEqual((rack1['uuid'],), fresh.domains_of('rack', 'h3'))
        # and h4, still in rack-2, takes it
        second = self._boot(group, doc, name='third', host='h4')[0]
        self.assertEqual('h4', self.host_of(second))

    def test_without_the_comparison_the_copy_would_decide(self):
        """The control: with the comparison off, the move of h3 is not
        seen, and the boot breaks the policy."""
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.aggregate_cache.AggregateCache.'
            'behind', lambda self, context, view: False))
        group = self._group()
        doc = {'policies': ['anti-affinity:rack']}
        self._boot(group, doc, name='first', host='h1')
        rack1, rack2 = self._aggregate('rack-1'), self._aggregate('rack-2')
        self.admin_api.remove_host_from_aggregate(rack2['id'], 'h3')
        self.admin_api.add_host_to_aggregate(rack1['id'], 'h3')
        second = self._boot(group, doc, name='second', host='h3')[0]
        self.assertEqual('h3', self.host_of(second))
