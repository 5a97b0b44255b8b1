"""The simulator and the real nova-scheduler place one scenario alike.

The same scenario runs through the simulator (embedded Placement, both
engines) and through nova's API, conductor and scheduler with real
Placement, every boot in the same order; each server must land on the same
host.

Weights must be deterministic: where our weighers tie, nova takes the host
Placement listed first and the simulator the first by name. The nova side
therefore also runs :class:`NameOrderWeigher`, whose tiny multiplier only
breaks ties, in name order.
"""

import re

from nova.scheduler import weights
from nova_scoped_policies.placement import fake
from nova_scoped_policies.simulator import fast
from nova_scoped_policies.simulator import runner
from nova_scoped_policies.simulator import scenario as sc
from tests.functional import base
from tests import placement_fixtures as pf

HOSTS = [f'h{i}' for i in range(1, 7)]
RACKS = base.ScopedPoliciesTestCase.RACKS
FLAVOR = {'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
SCENARIO = {
    'scopes': {'rack': {}},
    'aggregates': [{'name': rack, 'scope': 'rack', 'hosts': hosts}
                   for rack, hosts in RACKS.items()],
    # what nova's fake computes report
    'hosts': [{'name': h, 'resources': {'VCPU': 1000, 'MEMORY_MB': 800000,
                                        'DISK_GB': 600000}} for h in HOSTS],
    'groups': [
        {'name': 'spread', 'policies': ['soft-anti-affinity:host',
                                        'anti-affinity:rack'],
         'rules': {'max_server_per_rack': 2}},
        {'name': 'pack', 'policies': ['soft-affinity:host',
                                      'soft-anti-affinity:rack']},
    ],
    'requests': [
        {'boot': {'name': 'a', 'group': 'spread', 'flavor': FLAVOR}},
        {'boot': {'name': 'b', 'group': 'spread', 'flavor': FLAVOR}},
        {'boot': {'name': 'c', 'group': 'spread', 'count': 3,
                  'flavor': FLAVOR}},
        {'boot': {'name': 'p', 'group': 'pack', 'flavor': FLAVOR}},
        {'boot': {'name': 'q', 'group': 'pack', 'count': 2,
                  'flavor': FLAVOR}},
        {'boot': {'name': 'd', 'group': 'spread', 'flavor': FLAVOR}},
    ],
}
# The nova group policy each scenario group stands for, and the hint.
NOVA = {'spread': ('soft-anti-affinity', {
            'policies': ['anti-affinity:rack'],
            'rules': {'max_server_per_rack': 2}}),
        'pack': ('soft-affinity', {'policies': ['soft-anti-affinity:rack']})}


class NameOrderWeigher(weights.BaseHostWeigher):
    """h1 > h2 > ... with a multiplier too small to outweigh anything."""

    def weight_multiplier(self, host_state):
        return 0.001

    def _weigh_object(self, host_state, weight_properties):
        return -int(re.sub(r'\D', '', host_state.host))


class AgreementTest(base.ScopedPoliciesTestCase):

    WEIGHERS = [base.OUR_WEIGHERS,
                'tests.functional.test_agreement.NameOrderWeigher']

    def _simulate(self):
        fixture = pf.FakePlacementFixture()
        fixture.setUp()
        self.addCleanup(fixture.cleanUp)
        scenario = sc.parse(SCENARIO)
        result = runner.Simulation(scenario, pf.client_for(fixture)).run()
        self.assertEqual([], result['failures'])
        fast_result = fast.FastSimulation(scenario,
                                          fake.FakePlacement()).run()
        fast_result['stats'].pop('seconds')
        result['stats'].pop('seconds')
        # --engine fast decides as the default engine
        self.assertEqual(result, fast_result)
        return {p['server']: p['host'] for p in result['placements']}

    def test_same_host_for_every_boot(self):
        expected = self._simulate()
        groups = {name: self._group(policy) for name, (policy, _) in
                  NOVA.items()}
        placed = {}
        for request in SCENARIO['requests']:
            boot = request['boot']
            count = boot.get('count', 1)
            servers = self._boot(groups[boot['group']],
                                 NOVA[boot['group']][1], count=count,
                                 name=boot['name'])
            for server in servers:
                # nova names a multi-create NAME-i, a single boot NAME
                name = server['name'] if count > 1 else f'{boot["name"]}-1'
                placed[name] = self.host_of(server)
        self.assertEqual(expected, placed)
        # and the scenario did exercise the policies
        self.assertEqual(6, len({placed[s] for s in
                                 ('a-1', 'b-1', 'c-1', 'c-2', 'c-3',
                                  'd-1')}))
        self.assertEqual(1, len({placed[s] for s in ('p-1', 'q-1', 'q-2')}))
