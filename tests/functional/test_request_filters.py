"""Our pre-placement request filters in the real nova-scheduler, with the
real Placement answering the ``GET /allocation_candidates`` they shape."""

import collections
import logging
from urllib import parse

import fixtures

from nova.scheduler.client import report
from nova.scheduler import request_filter
from nova_scoped_policies.scheduler.filters import scoped_affinity
from tests.functional import base

LICENSED = 'CUSTOM_WINDOWS_LICENSED'


def member_of(query):
    """The member_of values of a query string, decoded."""
    return parse.parse_qs(query).get('member_of', [])


class QuerySpy:
    """Records every allocation-candidates query and what the host filters
    are handed."""

    def __init__(self, test):
        self.queries = []
        self.filter_hosts = []
        # what our request filters log (DEBUG, like nova's traced filters)
        self.log = test.useFixture(fixtures.FakeLogger(
            name='nova_scoped_policies.scheduler.request_filters',
            level=logging.DEBUG, format='%(name)s %(message)s'))
        real_query = report.SchedulerReportClient.get_allocation_candidates
        real_filter = scoped_affinity.ScopedAffinityFilter.filter_all
        spy = self

        def get_allocation_candidates(client, context, resources):
            spy.queries.append(resources.to_querystring())
            return real_query(client, context, resources)

        def filter_all(filt, host_states, spec_obj):
            host_states = list(host_states)
            spy.filter_hosts.append(sorted(h.host for h in host_states))
            return real_filter(filt, host_states, spec_obj)

        test.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'get_allocation_candidates', get_allocation_candidates))
        test.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.filters.scoped_affinity.'
            'ScopedAffinityFilter.filter_all', filter_all))


class LicensedWindowsTest(base.ScopedPoliciesTestCase):
    """forbidden-aggregates.rst: h1 is reserved for licensed Windows."""

    OPTIONS = {'enable_forbidden_aggregates_filter': True}

    def setUp(self):
        super().setUp()
        self.placement.put(f'/traits/{LICENSED}', None, version='1.6')
        self._set_provider_traits(self._get_provider_uuid_by_host('h1'),
                                  [LICENSED])
        self.win = self._make_aggregate(
            'licensed-windows', ['h1'], {f'trait:{LICENSED}': 'required'})
        self.windows_image = self._create_image(
            {f'trait:{LICENSED}': 'required'})['id']

    def test_plain_image_never_lands_in_the_licensed_aggregate(self):
        # Asked for h1 by name, the plain image still cannot have it.
        server = self._boot(None, host='h1', expected='ERROR')[0]
        self.assertIn('No valid host', server['fault']['message'])
        for i in range(5):
            server = self._boot(None, name=f'plain-{i}')[0]
            self.assertNotEqual('h1', self.host_of(server))

    def test_image_requiring_the_trait_may(self):
        server = self._boot(None, image=self.windows_image)[0]
        self.assertEqual('h1', self.host_of(server))

    def test_query_forbids_the_aggregate_for_plain_images_only(self):
        spy = QuerySpy(self)
        self._boot(None)
        self._boot(None, image=self.windows_image)
        plain, windows = spy.queries
        self.assertEqual([f'!in:{self.win["uuid"]}'], member_of(plain))
        self.assertNotIn('member_of', windows)
        self.assertIn(f'required={LICENSED}', windows)
        # logged once: for the plain image only
        self.assertEqual(1, spy.log.output.count(
            f'ForbiddenAggregatesFilter added member_of=!in:'
            f'{self.win["uuid"]} (request requires no trait)'))


class LicensedWindowsDisabledTest(LicensedWindowsTest):
    """The same cloud without the option: nothing changes."""

    OPTIONS = {}

    def test_plain_image_never_lands_in_the_licensed_aggregate(self):
        server = self._boot(None, host='h1')[0]
        self.assertEqual('h1', self.host_of(server))

    def test_query_forbids_the_aggregate_for_plain_images_only(self):
        spy = QuerySpy(self)
        self._boot(None)
        self.assertNotIn('member_of', spy.queries[0])
        self.assertEqual('', spy.log.output)
        # only scoped_plan, on by default and inert without its hints
        self.assertEqual(['ScopedPlanFilter'], [
            type(f).__name__ for f in request_filter.ALL_REQUEST_FILTERS
            if type(f).__module__.startswith('nova_scoped_policies')])


class AffinityRackQueryTest(base.ScopedPoliciesTestCase):
    """4 racks x 3 hosts, affinity:rack, first member in the last rack."""

    RACKS = collections.OrderedDict(
        (f'rack-{r}', [f'h{3 * r - 2}', f'h{3 * r - 1}', f'h{3 * r}'])
        for r in range(1, 5))
    OPTIONS = {'enable_scoped_policy_query_filter': True}

    def test_later_boots_query_only_the_members_rack(self):
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['affinity:rack']}
        spy = QuerySpy(self)
        first = self._boot(group, doc, host='h12')[0]
        self.assertEqual('h12', self.host_of(first))
        rack4 = self.admin_api.api_get(
            '/os-aggregates').body['aggregates'][3]
        self.assertEqual('rack-4', rack4['name'])

        later = [self._boot(group, doc, name=f's{i}')[0] for i in range(3)]
        self.assertEqual({'rack-4': 3}, dict(self.racks_of(later)))
        # First boot: no member yet, nothing to push. Every later one:
        # member_of=in:<rack-4>, and the host filters saw rack-4 only.
        self.assertNotIn('member_of', spy.queries[0])
        for query in spy.queries[1:]:
            self.assertEqual([f'in:{rack4["uuid"]}'], member_of(query))
        self.assertEqual(3, spy.log.output.count(
            "ScopedPolicyQueryFilter added to the Placement query: "
            f"affinity:rack: in ['{rack4['uuid']}']"))
        self.assertEqual(4, len(spy.queries))
        for seen in spy.filter_hosts[1:]:
            self.assertTrue(set(seen) <= {'h10', 'h11', 'h12'}, seen)
            self.assertTrue(seen)

    def test_anti_affinity_forbids_full_racks(self):
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['anti-affinity:rack']}
        spy = QuerySpy(self)
        servers = [self._boot(group, doc)[0] for _ in range(4)]
        self.assertEqual(4, len(self.racks_of(servers)))
        # The n-th boot forbids the n-1 racks already used.
        for n, query in enumerate(spy.queries):
            forbidden = [v for v in member_of(query) if v.startswith('!in:')]
            if n == 0:
                self.assertEqual([], forbidden)
            else:
                self.assertEqual(n, len(forbidden[0][4:].split(',')), query)
        self._boot(group, doc, expected='ERROR')


class QueryFilterDisabledTest(AffinityRackQueryTest):
    """Same cloud, option off: the query never changes, hosts still right."""

    OPTIONS = {}

    def test_later_boots_query_only_the_members_rack(self):
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['affinity:rack']}
        spy = QuerySpy(self)
        self._boot(group, doc, host='h12')
        later = [self._boot(group, doc, name=f's{i}')[0] for i in range(2)]
        self.assertEqual({'rack-4': 2}, dict(self.racks_of(later)))
        # (the first boot asked for h12: in_tree=<h12>)
        self.assertEqual(1, len(set(spy.queries[1:])), spy.queries)
        self.assertEqual([], member_of(spy.queries[1]))
        self.assertEqual('', spy.log.output)
        # Without the query filter the host filters see every host.
        self.assertEqual(12, len(spy.filter_hosts[-1]))

    def test_anti_affinity_forbids_full_racks(self):
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['anti-affinity:rack']}
        spy = QuerySpy(self)
        for _ in range(2):
            self._boot(group, doc)
        self.assertNotIn('member_of', spy.queries[1])
