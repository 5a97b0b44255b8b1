"""spread, weights and licences in the real nova-scheduler (#28).

Fake computes in racks (see base.ScopedPoliciesTestCase); every boot goes
through nova's API, conductor, our filters and weighers and Placement.
"""

import collections

from tests.functional import base


class SpreadTest(base.ScopedPoliciesTestCase):
    """The issue's example: 7 web servers over racks of 4, 1 and 1 hosts.

    soft-anti-affinity:rack gives 4/2/1 and anti-affinity:host with
    max_server_per_host 2 gives 5/1/1; Kubernetes' maxSkew 1 gives 3/2/2.
    """

    RACKS = collections.OrderedDict([
        ('rack-1', ['h1', 'h2', 'h3', 'h4']),
        ('rack-2', ['h5']),
        ('rack-3', ['h6']),
    ])

    def test_spread_max_skew_1(self):
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['spread:rack']}
        servers = []
        for i in range(7):
            servers += self._boot(group, doc, name=f'web-{i}')
            counts = self.racks_of(servers)
            self.assertLessEqual(
                max(counts.values()) - min(counts.get(r, 0)
                                           for r in self.RACKS), 1, counts)
        self.assertEqual({'rack-1': 3, 'rack-2': 2, 'rack-3': 2},
                         dict(self.racks_of(servers)))

    def test_max_skew_2_in_one_multi_instance_request(self):
        group = self._group('soft-affinity')
        doc = {'policies': ['spread:rack'], 'rules': {'max_skew_rack': 2}}
        servers = self._boot(group, doc, count=5)
        counts = self.racks_of(servers)
        self.assertLessEqual(max(counts.values())
                             - min(counts.get(r, 0) for r in self.RACKS), 2,
                             counts)

    def test_contradiction_is_refused_naming_the_policies(self):
        group = self._group('anti-affinity')
        failed = self._boot(group, {'policies': ['spread:rack',
                                                 'affinity:rack']},
                            expected='ERROR')[0]
        message = failed['fault']['message']
        self.assertIn('spread:rack', message)
        self.assertIn('contradict', message)


class WeightTest(base.ScopedPoliciesTestCase):
    """Two members fill both hosts of a rack; where the third goes is the
    weights' to say: soft-affinity:rack pulls it into that rack,
    soft-anti-affinity:host (nova's group policy) away from both hosts."""

    def _third(self, rules):
        group = self._group('soft-anti-affinity')
        # a weight names a policy of its own document: the hint restates
        # the group's soft-anti-affinity:host
        doc = {'policies': ['soft-affinity:rack', 'soft-anti-affinity:host'],
               'rules': rules}
        first = [self._boot(group, doc, name=f's{i}')[0] for i in range(2)]
        hosts = {self.host_of(s) for s in first}
        self.assertEqual(2, len(hosts))
        self.assertEqual(1, len(self.racks_of(first)))
        third = self._boot(group, doc, name='third')[0]
        return (self.rack_of[self.host_of(third)] ==
                self.rack_of[self.host_of(first[0])],
                self.host_of(third) in hosts)

    def test_heavier_rack_affinity_doubles_up_in_the_rack(self):
        same_rack, same_host = self._third({'weight_soft-affinity:rack': 50})
        self.assertTrue(same_rack)
        self.assertTrue(same_host)

    def test_heavier_host_anti_affinity_leaves_the_rack(self):
        same_rack, same_host = self._third(
            {'weight_soft-anti-affinity:host': 50})
        self.assertFalse(same_rack)
        self.assertFalse(same_host)


class LicenseTest(base.ScopedPoliciesTestCase):

    def setUp(self):
        super().setUp()
        self._make_aggregate('oracle-hosts', ['h3', 'h4'],
                             {'license:ORACLE': 'allowed'})

    def test_license_keeps_members_on_licensed_hosts(self):
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['license:oracle', 'soft-license-pack:oracle']}
        servers = [self._boot(group, doc, name=f'db-{i}')[0]
                   for i in range(3)]
        self.assertLessEqual({self.host_of(s) for s in servers},
                             {'h3', 'h4'})

    def test_license_needs_no_group(self):
        server = self._boot(None, {'policies': ['license:oracle']})[0]
        self.assertIn(self.host_of(server), {'h3', 'h4'})

    def test_no_licensed_host_left_says_why(self):
        failed = self._boot(None, {'policies': ['license:db2']},
                            expected='ERROR')[0]
        self.assertIn('license:DB2: all 6 hosts left are not licensed',
                      failed['fault']['message'])

    def test_a_host_licensed_by_its_trait_alone(self):
        """nova-scheduler reads the licence trait from Placement: h5 runs
        SAP by CUSTOM_LICENSE_SAP, and no aggregate says so."""
        self.placement.put('/traits/CUSTOM_LICENSE_SAP', None,
                           version='1.6')
        (provider,) = self.placement.get(
            '/resource_providers?name=h5',
            version='1.6').body['resource_providers']
        uri = f"/resource_providers/{provider['uuid']}/traits"
        current = self.placement.get(uri, version='1.6').body
        self.placement.put(uri, {
            'resource_provider_generation':
                current['resource_provider_generation'],
            'traits': current['traits'] + ['CUSTOM_LICENSE_SAP']},
            version='1.6')
        servers = [self._boot(None, {'policies': ['license:sap']},
                              name=f'sap-{i}')[0] for i in range(2)]
        self.assertEqual({'h5'}, {self.host_of(s) for s in servers})
        # the aggregate's licence still counts beside the trait
        self.assertIn(self.host_of(self._boot(
            None, {'policies': ['license:oracle']})[0]), {'h3', 'h4'})

    def test_moves_stay_on_licensed_hosts(self):
        server = self._boot(None, {'policies': ['license:oracle']})[0]
        source = self.host_of(server)
        (other,) = {'h3', 'h4'} - {source}
        # cold migration without a target: the other licensed host
        server = self._migrate_server(server, api=self.admin_api)
        self.assertEqual(other, self.host_of(server))
        server = self._confirm_resize(server)
        # to an unlicensed target: refused, and the server stays
        self.admin_api.post_server_action(server['id'],
                                          {'migrate': {'host': 'h1'}})
        event = self._wait_for_action_fail_completion(
            server, 'migrate', 'conductor_migrate_server')
        self.assertIn('NoValidHost', event.get('traceback') or str(event))
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual(other, self.host_of(server))
