"""Scoped, rule-limited and LLMN policies in the real nova-scheduler.

Six fake computes in three racks (see base.ScopedPoliciesTestCase).
"""

from tests.functional import base


class RackAntiAffinityTest(base.ScopedPoliciesTestCase):

    def test_one_per_rack_then_no_valid_host(self):
        group = self._group('anti-affinity')
        doc = {'policies': ['anti-affinity:rack']}
        servers = [self._boot(group, doc)[0] for _ in range(3)]
        self.assertEqual({'rack-1': 1, 'rack-2': 1, 'rack-3': 1},
                         dict(self.racks_of(servers)))

        failed = self._boot(group, doc, expected='ERROR')[0]
        # the tenant reads why, without any host or aggregate named
        message = failed['fault']['message']
        self.assertIn('No valid host', message)
        self.assertIn('No valid host was found. scoped policies: '
                      'anti-affinity:host: 3 hosts hold 1 of max 1; '
                      'anti-affinity:rack: all 3 rack domains hold 1 of '
                      'max 1', message)
        for host in self.rack_of:
            self.assertNotIn(host, message.split('scoped policies')[1])
        self.assertIsNone(self.host_of(failed))

    def test_max_server_per_rack(self):
        group = self._group('anti-affinity')
        doc = {'policies': ['anti-affinity:rack'],
               'rules': {'max_server_per_rack': 2}}
        servers = [self._boot(group, doc)[0] for _ in range(6)]
        self.assertEqual({'rack-1': 2, 'rack-2': 2, 'rack-3': 2},
                         dict(self.racks_of(servers)))
        # Nova's anti-affinity:host is kept as well: one per host.
        self.assertEqual(6, len({self.host_of(s) for s in servers}))
        self._boot(group, doc, expected='ERROR')

    def test_multi_instance_request_honours_rack_anti_affinity(self):
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['anti-affinity:rack']}
        servers = self._boot(group, doc, count=3)
        self.assertEqual(3, len(servers))
        self.assertEqual({'rack-1': 1, 'rack-2': 1, 'rack-3': 1},
                         dict(self.racks_of(servers)))

    def test_multi_instance_request_fails_whole_when_racks_run_out(self):
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['anti-affinity:rack']}
        servers = self._boot(group, doc, count=4, expected='ERROR')
        self.assertEqual(4, len(servers))
        for server in servers:
            self.assertIsNone(self.host_of(server))


class RackSoftAntiAffinityTest(base.ScopedPoliciesTestCase):

    def test_soft_anti_affinity_spreads_evenly(self):
        group = self._group('soft-anti-affinity')
        doc = {'policies': ['soft-anti-affinity:rack']}
        servers = []
        for i in range(6):
            servers += self._boot(group, doc, name=f's{i}')
            counts = self.racks_of(servers)
            # After every boot no rack is ahead of another by more than one.
            self.assertLessEqual(
                max(counts.values()) - min(counts.get(r, 0)
                                           for r in self.RACKS), 1,
                counts)
        self.assertEqual({'rack-1': 2, 'rack-2': 2, 'rack-3': 2},
                         dict(self.racks_of(servers)))


class LLMNTest(base.ScopedPoliciesTestCase):

    def test_llmn_rack_host_n2_size4(self):
        group = self._group('soft-anti-affinity')
        doc = {'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
               'rules': {'size': 4}}
        servers = [self._boot(group, doc)[0] for _ in range(4)]
        hosts = [self.host_of(s) for s in servers]
        self.assertEqual(4, len(set(hosts)), 'two members on one host')
        racks = self.racks_of(servers)
        self.assertGreaterEqual(len(racks), 2)
        self.assertLessEqual(max(racks.values()), 2)  # ceil(4/2)

    def test_llmn_min_domains_overrides_a_soft_pull(self):
        # Two pods: pod-1 = rack-1 + rack-2, pod-2 = rack-3. soft-affinity:pod
        # pulls members into one pod, where 2 racks x 2 hosts could take all
        # 4 members; LLMN n=3 (max 2 per rack, min_domains_rack=3) must still
        # send one member to a third rack.
        self._make_domain('pod-1', 'pod', ['h1', 'h2', 'h3', 'h4'])
        self._make_domain('pod-2', 'pod', ['h5', 'h6'])
        group = self._group('soft-anti-affinity')
        doc = {'llmn': {'level1': 'rack', 'level2': 'host', 'n': 3},
               'policies': ['soft-affinity:pod'],
               'rules': {'size': 4}}
        servers = [self._boot(group, doc)[0] for _ in range(4)]
        racks = self.racks_of(servers)
        self.assertEqual(3, len(racks), racks)
        self.assertLessEqual(max(racks.values()), 2)
        self.assertEqual(4, len({self.host_of(s) for s in servers}))


class BadHintTest(base.ScopedPoliciesTestCase):

    def test_bad_hint_fails_with_a_reason_naming_the_field(self):
        group = self._group('anti-affinity')
        server = self._boot(group, {'policies': ['anti-affinity:rack'],
                                    'rules': {'max_server_per_rack': 0}},
                            expected='ERROR')[0]
        self.assertIn('scoped_policies.rules.max_server_per_rack',
                      server['fault']['message'])

    def test_unknown_scope_fails_closed(self):
        group = self._group('anti-affinity')
        server = self._boot(group, {'policies': ['anti-affinity:switch']},
                            expected='ERROR')[0]
        self.assertIn('No valid host', server['fault']['message'])


class SharedNovaConfTest(base.ScopedPoliciesTestCase):
    """One nova.conf for conductor and scheduler: nova's group filters and
    weighers stay listed (the conductor requires their names) next to ours.
    """

    CONDUCTOR_HAS_OWN_CONF = False
    ENABLED_FILTERS = (base.ScopedPoliciesTestCase.ENABLED_FILTERS
                       + ['ServerGroupAffinityFilter',
                          'ServerGroupAntiAffinityFilter'])
    WEIGHERS = ['nova.scheduler.weights.all_weighers', base.OUR_WEIGHERS]

    def test_rack_anti_affinity_with_nova_filters_listed_too(self):
        group = self._group('anti-affinity')
        doc = {'policies': ['anti-affinity:rack']}
        servers = [self._boot(group, doc)[0] for _ in range(3)]
        self.assertEqual({'rack-1': 1, 'rack-2': 1, 'rack-3': 1},
                         dict(self.racks_of(servers)))
        self._boot(group, doc, expected='ERROR')
