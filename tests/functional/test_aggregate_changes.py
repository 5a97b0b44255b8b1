"""Aggregate changes apply at once, with a refresh interval of an hour.

nova-api emits a versioned notification for every aggregate change; the
nova seam's listener marks our cache stale on each, and it reloads once
(nova_seam/aggregates.py). nova's in-process harness keeps notifications
in memory instead of sending them (nova's NotificationFixture): here
every versioned notification nova records is handed, in the emitting
thread, to the endpoint the listener would call.
tests/functional/test_aggregate_notifications.py runs the real listener on
RabbitMQ, against separate nova processes.
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
