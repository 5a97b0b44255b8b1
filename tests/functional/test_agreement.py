"""The simulator and the real nova-scheduler place one scenario alike.

The same scenario runs through the simulator (embedded Placement, both
engines) and through nova's API, conductor and scheduler with real
Placement, every boot in the same order; each server must land on the same
host. Both run what the README configures: nova's default filters and
weighers (RAM, CPU, disk, I/O, server groups...) and ours; the scenario
leaves ``config`` out. Boots outside groups spread over the hosts by nova's
weighers, and one flavor asks for a custom resource class only two hosts
have.

After each boot the computes run their periodic task, as a cloud's do,
so that nova-scheduler sees each compute node as the simulator does once a
server is built: its usage, its servers, no build in flight.

Weights must be deterministic: where the weighers tie, nova takes the host
Placement listed first and the simulator the first by name. The nova side
therefore also runs :class:`NameOrderWeigher`, whose tiny multiplier only
breaks ties, in name order.
"""

import re

import fixtures

from nova.scheduler import weights
from nova.virt import fake as fake_virt
from nova_scoped_policies.placement import fake
from nova_scoped_policies.simulator import fast
from nova_scoped_policies.simulator import runner
from nova_scoped_policies.simulator import scenario as sc
from tests.functional import base
from tests import placement_fixtures as pf

HOSTS = [f'h{i}' for i in range(1, 7)]
RACKS = base.ScopedPoliciesTestCase.RACKS
GPUS = {'h5': 2, 'h6': 1}
FLAVOR = {'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
GPU_FLAVOR = {'resources': dict(FLAVOR['resources'], CUSTOM_GPU=1)}
SCENARIO = {
    'scopes': {'rack': {}},
    'aggregates': [{'name': rack, 'scope': 'rack', 'hosts': hosts}
                   for rack, hosts in RACKS.items()],
    # what nova's fake computes report
    'hosts': [{'name': h, 'resources': dict(
        {'VCPU': 1000, 'MEMORY_MB': 800000, 'DISK_GB': 600000},
        **({'CUSTOM_GPU': GPUS[h]} if h in GPUS else {}))} for h in HOSTS],
    'groups': [
        {'name': 'spread', 'policies': ['soft-anti-affinity:host',
                                        'anti-affinity:rack'],
         'rules': {'max_server_per_rack': 2}},
        {'name': 'pack', 'policies': ['soft-affinity:host',
                                      'soft-anti-affinity:rack']},
    ],
    'requests': [
        {'boot': {'name': 'w', 'count': 3, 'flavor': FLAVOR}},
        {'boot': {'name': 'a', 'group': 'spread', 'flavor': FLAVOR}},
        {'boot': {'name': 'b', 'group': 'spread', 'flavor': FLAVOR}},
        {'boot': {'name': 'c', 'group': 'spread', 'count': 3,
                  'flavor': FLAVOR}},
        {'boot': {'name': 'gpu', 'count': 2, 'flavor': GPU_FLAVOR}},
        {'boot': {'name': 'p', 'group': 'pack', 'flavor': FLAVOR}},
        {'boot': {'name': 'q', 'group': 'pack', 'count': 2,
                  'flavor': FLAVOR}},
        {'boot': {'name': 'x', 'flavor': FLAVOR}},
        {'boot': {'name': 'd', 'group': 'spread', 'flavor': FLAVOR}},
    ],
}
# The nova group policy each scenario group stands for (the policy of its
# host scope), and the hint.
NOVA = {'spread': ('soft-anti-affinity', {
            'policies': ['anti-affinity:rack'],
            'rules': {'max_server_per_rack': 2}}),
        'pack': ('soft-affinity', {'policies': ['soft-anti-affinity:rack']})}


class Driver:
    """nova's fake driver, like a real one in what the scheduler reads:
    the disk left is what nova has not allocated (the fake reports no disk
    left at all, libvirt the filesystem's), and h5 and h6 have GPUs, a
    custom resource class in the inventory of their compute node.

    nova loads drivers from ``nova.virt`` only: the test patches these
    methods into its fake driver.
    """

    real_resource = fake_virt.FakeDriver.get_available_resource
    real_tree = fake_virt.FakeDriver.update_provider_tree

    def get_available_resource(self, nodename):
        found = Driver.real_resource(self, nodename)
        found['disk_available_least'] = found['local_gb']
        return found

    def update_provider_tree(self, provider_tree, nodename,
                             allocations=None):
        Driver.real_tree(self, provider_tree, nodename, allocations)
        if nodename in GPUS:
            inventory = dict(provider_tree.data(nodename).inventory)
            inventory['CUSTOM_GPU'] = {
                'total': GPUS[nodename], 'reserved': 0, 'min_unit': 1,
                'max_unit': GPUS[nodename], 'step_size': 1,
                'allocation_ratio': 1.0}
            provider_tree.update_inventory(nodename, inventory)


class NameOrderWeigher(weights.BaseHostWeigher):
    """h1 > h2 > ... with a multiplier too small to outweigh anything."""

    def weight_multiplier(self, host_state):
        return 0.001

    def _weigh_object(self, host_state, weight_properties):
        return -int(re.sub(r'\D', '', host_state.host))


class AgreementTest(base.ScopedPoliciesTestCase):

    # the README's nova.conf (the simulator's default), and the tie-break
    ENABLED_FILTERS = sc.NOVA_DEFAULTS['enabled_filters']
    WEIGHERS = sc.NOVA_DEFAULTS['weight_classes'] + [
        'tests.functional.test_agreement.NameOrderWeigher']
    CONDUCTOR_HAS_OWN_CONF = False

    def setUp(self):
        for name in ('get_available_resource', 'update_provider_tree'):
            patch = fixtures.MonkeyPatch(
                f'nova.virt.fake.FakeDriver.{name}', getattr(Driver, name))
            patch.setUp()
            self.addCleanup(patch.cleanUp)
        super().setUp()
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')

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
        self._run_periodics()
        groups = {name: self._group(policy) for name, (policy, _) in
                  NOVA.items()}
        gpu = self.admin_api.post_flavor({'flavor': {
            'name': 'gpu', 'id': 'gpu', 'ram': 512, 'vcpus': 1, 'disk': 1}})
        self.admin_api.post_extra_spec(gpu['id'], {'extra_specs': {
            'resources:CUSTOM_GPU': '1'}})
        placed = {}
        for request in SCENARIO['requests']:
            boot = request['boot']
            count = boot.get('count', 1)
            group = boot.get('group')
            servers = self._boot(
                groups[group] if group else None,
                NOVA[group][1] if group else None, count=count,
                name=boot['name'],
                flavor=gpu['id'] if boot['flavor'] is GPU_FLAVOR else None)
            for server in servers:
                # nova names a multi-create NAME-i, a single boot NAME
                name = server['name'] if count > 1 else f'{boot["name"]}-1'
                placed[name] = self.host_of(server)
            self._run_periodics()
        self.assertEqual(expected, placed)
        # and the scenario did exercise the policies and nova's weighers
        self.assertEqual(6, len({placed[s] for s in
                                 ('a-1', 'b-1', 'c-1', 'c-2', 'c-3',
                                  'd-1')}))
        # soft affinity wins where the hosts are otherwise alike; within
        # one request nova's RAM, CPU, disk and I/O weighers outweigh it
        self.assertEqual(placed['p-1'], placed['q-1'])
        self.assertNotEqual(placed['q-1'], placed['q-2'])
        self.assertEqual(['h1', 'h2', 'h3'],
                         sorted(placed[f'w-{i}'] for i in (1, 2, 3)))
        self.assertEqual(['h5', 'h6'],
                         sorted(placed[f'gpu-{i}'] for i in (1, 2)))
