"""A real nova (API, conductor, scheduler, fake computes) on real Placement.

Built on nova's own functional fixtures, installed with the nova wheel.
Our filters and weighers are enabled exactly as an operator enables them in
nova.conf: by dotted path in ``available_filters`` and ``weight_classes``.
"""

import collections
import os
import sys

import fixtures
from oslo_serialization import jsonutils

from nova.scheduler import request_filter
from nova import test
from nova.tests import fixtures as nova_fixtures
from nova.tests.functional import fixtures as func_fixtures
from nova.tests.functional import integrated_helpers
from nova_scoped_policies.scheduler import state

OUR_FILTERS = 'nova_scoped_policies.scheduler.filters.all_filters'
OUR_WEIGHERS = 'nova_scoped_policies.scheduler.weights.all_weighers'
IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'  # nova's GlanceFixture
# nova's helper polls every 0.5 s, 10 times by default: too short for a
# boot on a busy 2-core machine. A boot that is done returns at once.
WAIT_RETRIES = 60


class ScopedPoliciesTestCase(test.TestCase,
                             integrated_helpers.PlacementInstanceHelperMixin):
    """Starts nova with ``RACKS`` racks of host aggregates.

    ``RACKS`` maps a rack name to its hosts; each rack is an aggregate with
    ``policy_scope=rack``.
    """

    RACKS = collections.OrderedDict([
        ('rack-1', ['h1', 'h2']),
        ('rack-2', ['h3', 'h4']),
        ('rack-3', ['h5', 'h6']),
    ])
    ENABLED_FILTERS = ['ComputeFilter', 'ImagePropertiesFilter',
                       'ScopedAffinityFilter', 'ScopedAntiAffinityFilter']
    WEIGHERS = [OUR_WEIGHERS]
    # nova-conductor refuses group boots unless the enabled_filters and
    # weight_classes of *its* nova.conf name nova's own group filters and
    # weighers (nova.scheduler.utils._get_group_details). Conductor and
    # scheduler share one CONF in these tests, so by default they stand for
    # a deployment whose conductor nova.conf names nova's classes while the
    # scheduler's names only ours. SharedNovaConf tests set this to False
    # and list both, as one shared nova.conf must.
    CONDUCTOR_HAS_OWN_CONF = True
    # [scoped_policies] options set before nova-scheduler starts.
    OPTIONS = {}
    COMPUTE_DRIVER = None
    """nova's fake virt driver to use, e.g. ``fake.MediumFakeDriver``."""

    def _clear_attrs(self):
        # nova's TestCase deletes every public attribute after a test,
        # including the bound test method pytest looks up afterwards.
        keep = {'id', self._testMethodName}
        for key in [k for k in self.__dict__ if k[0] != '_' and
                    k not in keep]:
            del self.__dict__[key]

    def setUp(self):
        super().setUp()
        self.flags(api_paste_config=os.path.join(
            sys.prefix, 'etc', 'nova', 'api-paste.ini'), group='wsgi')
        self.flags(available_filters=['nova.scheduler.filters.all_filters',
                                      OUR_FILTERS],
                   enabled_filters=self.ENABLED_FILTERS,
                   weight_classes=self.WEIGHERS,
                   group='filter_scheduler')
        if self.CONDUCTOR_HAS_OWN_CONF:
            for name in ('AFFINITY', 'ANTI_AFFINITY', 'SOFT_AFFINITY',
                         'SOFT_ANTI_AFFINITY'):
                self.useFixture(fixtures.MonkeyPatch(
                    f'nova.scheduler.utils._SUPPORTS_{name}', True))
        # Scopes change during a test: read aggregates on every request.
        # nova's harness keeps notifications in memory (no transport to
        # listen on): the seam's listener stays off here, and
        # test_aggregate_changes hands nova's aggregate notifications to
        # its endpoint; tests.functional.cloud runs the real listener.
        options = dict({'aggregate_notifications': False}, **self.OPTIONS)
        self.flags(aggregate_refresh_interval=0, group='scoped_policies',
                   **options)
        # nova-scheduler installs our request filters into this module
        # list when it starts (the nova seam); give each test its own copy.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.request_filter.ALL_REQUEST_FILTERS',
            list(request_filter.ALL_REQUEST_FILTERS)))
        # A fresh per-process cache for each test.
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.state.STATES',
            state.RequestStates()))

        self.useFixture(nova_fixtures.RealPolicyFixture())
        self.glance = self.useFixture(nova_fixtures.GlanceFixture(self))
        self.useFixture(nova_fixtures.NeutronFixture(self))
        self.placement_fixture = self.useFixture(
            func_fixtures.PlacementFixture())
        self.placement = self.placement_fixture.api
        api_fixture = self.useFixture(
            nova_fixtures.OSAPIFixture(api_version='v2.1'))
        self.api = api_fixture.api
        self.admin_api = api_fixture.admin_api
        self.api.microversion = '2.74'
        self.admin_api.microversion = '2.74'

        if self.COMPUTE_DRIVER:
            self.flags(compute_driver=self.COMPUTE_DRIVER)
        self.start_service('conductor')
        self.scheduler = self.start_service('scheduler')
        self.computes = {}
        for hosts in self.RACKS.values():
            for host in hosts:
                self.computes[host] = self.start_service('compute', host=host)
        self.rack_of = {}
        for rack, hosts in self.RACKS.items():
            self._make_domain(rack, 'rack', hosts)
            self.rack_of.update({host: rack for host in hosts})

    def _make_domain(self, name, scope, hosts, **metadata):
        metadata['policy_scope'] = scope
        return self._make_aggregate(name, hosts, metadata)

    def _make_aggregate(self, name, hosts, metadata):
        agg = self.admin_api.post_aggregate({'aggregate': {'name': name}})
        for host in hosts:
            self.admin_api.add_host_to_aggregate(agg['id'], host)
        self.admin_api.post_aggregate_action(
            agg['id'], {'set_metadata': {'metadata': metadata}})
        return agg

    def _group(self, policy='anti-affinity', rules=None):
        body = {'name': 'g', 'policy': policy}
        if rules:
            body['rules'] = rules
        return self.api.post_server_groups(body)

    def _post(self, group, document=None, count=1, name='server',
              image=IMAGE, host=None, flavor=None):
        """POST one boot request (``count`` servers) and return nova's
        answer at once, without waiting for the servers.

        ``group`` None boots outside any group; ``host`` asks for a host
        (admin, microversion 2.74: filters and Placement still apply);
        ``flavor`` None: the first flavor nova lists.
        """
        server = self._build_server(name=name, image_uuid=image,
                                    flavor_id=flavor, networks='none',
                                    host=host)
        if count > 1:
            server['min_count'] = server['max_count'] = count
            server['return_reservation_id'] = True
        hints = {'group': group['id']} if group else {}
        if document is not None:
            hints['scoped_policies'] = jsonutils.dumps(document)
        api = self.admin_api if host else self.api
        return api.post_server(
            {'server': server, 'os:scheduler_hints': hints})

    def _boot(self, group, document=None, expected='ACTIVE', count=1,
              name='server', image=IMAGE, host=None, flavor=None):
        """Boot ``count`` servers in one request (:meth:`_post`) and wait
        until they reach ``expected``; return them all."""
        created = self._post(group, document, count, name, image, host,
                             flavor)
        if count == 1:
            return [self._wait_for_state_change(created, expected,
                                                max_retries=WAIT_RETRIES)]
        servers = self.api.get_servers(
            search_opts={'reservation_id': created['reservation_id']})
        return [self._wait_for_state_change(s, expected,
                                            max_retries=WAIT_RETRIES)
                for s in servers]

    @staticmethod
    def host_of(server):
        return server['OS-EXT-SRV-ATTR:host']

    def racks_of(self, servers):
        return collections.Counter(self.rack_of[self.host_of(s)]
                                   for s in servers)
