"""The simulator honours Placement's inventory fields and held capacity
as Placement does (simulation.md, "Inventory details"; issue 48).

``hosts[].inventory`` (``allocation_ratio``, ``min_unit``, ``max_unit``,
``step_size``) beside ``resources`` and ``reserved``, and ``holds:``,
capacity stacks' decisions hold in Placement. Each scenario runs on the
fast engine, on the nova engine with the embedded Placement and with the
real Placement (openstack-placement's own fixture): the three reports
must be the same, and say what Placement says.
"""

import copy
import random

import pytest

from nova_scoped_policies.placement import fake
from nova_scoped_policies.simulator import embedded
from nova_scoped_policies.simulator import fast
from nova_scoped_policies.simulator import runner
from nova_scoped_policies.simulator import scenario as sc
from tests.functional import test_fast_engine
from tests import placement_fixtures as pf

NOT_A_CANDIDATE = 'placement: not a candidate (capacity or traits)'


def on_real_placement(scenario: sc.Scenario) -> dict:
    fixture = pf.real_placement()
    fixture.setUp()
    try:
        return test_fast_engine.timeless(runner.Simulation(
            scenario, pf.client_for(fixture)).run())
    finally:
        fixture.cleanUp()


def every_engine(data: dict) -> dict:
    """The report of ``data``, the same on the fast engine and the nova
    engine, on the embedded and the real Placement."""
    scenario = sc.parse(copy.deepcopy(data))
    report = test_fast_engine.run(scenario, 'fast')
    assert test_fast_engine.run(scenario, 'nova') == report
    assert on_real_placement(scenario) == report
    return report


def host(name, vcpus, **fields):
    found = {'name': name, 'resources': {
        'VCPU': vcpus, 'MEMORY_MB': 65536, 'DISK_GB': 1000}}
    if fields:
        found['inventory'] = {'VCPU': fields}
    return found


def candidates(vcpus: int, hosts) -> list:
    """The hosts Placement lists for a server of ``vcpus`` VCPU: a boot
    into an anti-affinity group of one server more than hosts fails,
    and its rejections tell the candidates from the others."""
    data = {'hosts': hosts,
            'groups': [{'name': 'g', 'policies': ['anti-affinity:host']}],
            'requests': [{'boot': {
                'name': 'probe', 'group': 'g', 'count': len(hosts) + 1,
                'flavor': {'resources': {'VCPU': vcpus, 'MEMORY_MB': 512,
                                         'DISK_GB': 1}}}}]}
    (failure,) = {f['reason']: f for f in every_engine(data)[
        'failures']}.values()
    return sorted(name for name, reasons in failure['rejections'].items()
                  if reasons != [NOT_A_CANDIDATE])


UNITS = [host('ratio', 8, allocation_ratio=4.0),
         host('max', 32, max_unit=8),
         host('step', 32, step_size=4),
         host('min', 32, min_unit=16)]


@pytest.mark.parametrize('vcpus, hosts', [
    (8, ['max', 'ratio', 'step']),
    (10, ['ratio']),
    (12, ['ratio', 'step']),
    (16, ['min', 'ratio', 'step']),
    (33, []),
])
def test_each_inventory_field_decides_as_placement(vcpus, hosts):
    """allocation_ratio: 8 VCPU at 4.0 take 32; max_unit 8 takes no
    more in one allocation; step_size 4 multiples of 4; min_unit 16 no
    less."""
    assert candidates(vcpus, UNITS) == hosts


def test_nova_weighs_vcpus_at_the_hosts_ratio():
    """nova's CPUWeigher reads ``vcpus_total x cpu_allocation_ratio -
    vcpus_used``: 8 VCPU at 4.0 (32 free) outweigh 16 at 1.0."""
    data = {'hosts': [host('small', 8, allocation_ratio=4.0),
                      host('big', 16)],
            'config': {'ram_weight_multiplier': 0.0,
                       'disk_weight_multiplier': 0.0,
                       'cpu_weight_multiplier': 1.0},
            'requests': [{'boot': {'name': 'a', 'flavor': {'resources': {
                'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}}}]}
    assert every_engine(data)['final'] == {'a-1': 'small'}


def test_running_servers_fit_placements_capacity():
    """``servers:`` fit the capacity at the host's ratio, and amounts its
    units allow; beyond them the scenario is refused naming the key."""
    data = {'hosts': [host('h1', 8, allocation_ratio=2.0, step_size=2)],
            'servers': [{'name': f's{i}', 'host': 'h1', 'flavor': {
                'resources': {'VCPU': 4}}} for i in range(4)]}
    assert every_engine(data)['final'] == {f's{i}': 'h1' for i in range(4)}
    data['servers'].append({'name': 'one-more', 'host': 'h1', 'flavor': {
        'resources': {'VCPU': 2}}})
    with pytest.raises(sc.ScenarioError) as caught:
        sc.parse(data)
    assert caught.value.path == 'servers[4].flavor.resources.VCPU'
    assert '0 of VCPU left' in str(caught.value)
    data['servers'][-1] = {'name': 'odd', 'host': 'h1', 'flavor': {
        'resources': {'VCPU': 1}}}
    data['servers'].pop(0)
    with pytest.raises(sc.ScenarioError, match='step_size of h1'):
        sc.parse(data)


STACK = {'name': 'app', 'project': 'tenant-a', 'group': {
    'name': 'app', 'policies': ['anti-affinity:host'],
    'servers': {'count': 2, 'flavor': {'resources': {'VCPU': 4}}}}}


def test_held_capacity_is_not_for_boots():
    """What a stack holds in Placement is taken: boots and moves go
    elsewhere, a boot that needs it fails, a stack decides around it."""
    data = {'hosts': [host('h1', 8), host('h2', 8)],
            'stacks': [STACK],
            'holds': [{'host': 'h1', 'resources': {'VCPU': 6},
                       'stack': 'app', 'server': 'app-1'},
                      {'host': 'h2', 'resources': {'VCPU': 2}}],
            'requests': [
                {'boot': {'name': 'a', 'flavor': {'resources': {
                    'VCPU': 4, 'MEMORY_MB': 512, 'DISK_GB': 1}}}},
                {'boot': {'name': 'b', 'flavor': {'resources': {
                    'VCPU': 4, 'MEMORY_MB': 512, 'DISK_GB': 1}}}}]}
    report = every_engine(data)
    # h1 keeps 2 free, h2 6: a goes to h2; b finds no host
    assert report['final'] == {'a-1': 'h2', 'b-1': None}
    assert report['failures'][0]['rejections'] == {
        'h1': [NOT_A_CANDIDATE], 'h2': [NOT_A_CANDIDATE]}
    # a stack's decision reads them as taken: 2 x 4 VCPU need 4 free on
    # two hosts, and h1 has 2
    data['requests'] = [{'plan': {'stack': 'app'}}]
    (plan,) = every_engine(data)['plans'].values()
    assert plan['status'] == 'infeasible'


def test_holds_are_checked_up_front():
    base = {'hosts': [host('h1', 8)], 'stacks': [STACK]}
    for holds, key, problem in [
            ([{'host': 'h9', 'resources': {'VCPU': 1}}], 'holds[0].host',
             'no such host'),
            ([{'host': 'h1', 'resources': {'VCPU': 9}}],
             'holds[0].resources.VCPU', '8 of VCPU left'),
            ([{'host': 'h1', 'resources': {'VCPU': 1}, 'stack': 'nope'}],
             'holds[0].stack', 'no such stack'),
            ([{'host': 'h1', 'resources': {'VCPU': 1}, 'stack': 'app',
               'server': 'app-9'}], 'holds[0].server', 'no such server'),
            ([{'host': 'h1', 'resources': {'VCPU': 1}, 'server': 'app-1'}],
             'holds[0].server', 'give stack too'),
            ([{'host': 'h1', 'resources': {'VCPU': 1}, 'stack': 'app',
               'server': 'app-1'}] * 2, 'holds[1].server', 'held twice')]:
        with pytest.raises(sc.ScenarioError) as caught:
            sc.parse(dict(base, holds=holds))
        assert caught.value.path == key and problem in str(caught.value)


def random_details(seed: int) -> dict:
    """A seeded random scenario of test_fast_engine with inventory
    details on some of its hosts, and holds."""
    rng = random.Random(seed)
    data = test_fast_engine.random_data(seed)
    for item in data['hosts']:
        for rc in item['resources']:
            if rng.random() < 0.3:
                fields = {}
                if rng.random() < 0.6:
                    fields['allocation_ratio'] = rng.choice(
                        [0.5, 1.5, 2.0, 4.0, 16.0])
                if rng.random() < 0.3:
                    fields['max_unit'] = max(
                        1, item['resources'][rc] // rng.choice([2, 4]))
                if rng.random() < 0.2:
                    fields['step_size'] = rng.choice([2, 4])
                if rng.random() < 0.2:
                    fields['min_unit'] = rng.choice([2, 4])
                item.setdefault('inventory', {})[rc] = fields
    for item in rng.sample(data['hosts'], 2):
        data.setdefault('holds', []).append({'host': item['name'],
                                             'resources': {'VCPU': 2}})
    return data


@pytest.mark.parametrize('seed', range(3))
def test_engines_agree_on_inventory_details(seed):
    every_engine(random_details(seed))


def test_fake_placement_takes_what_it_is_given():
    """The embedded Placement holds each inventory as the scenario gives
    it, Placement's defaults for the rest."""
    data = {'hosts': [host('h1', 8, allocation_ratio=2.0, min_unit=2)]}
    scenario = sc.parse(data)
    simulation = fast.FastSimulation(scenario, fake.FakePlacement())
    simulation.build()
    (provider,) = simulation.hosts.placement.providers.values()
    assert provider.inventories['VCPU'] == {
        'total': 8, 'reserved': 0, 'allocation_ratio': 2.0, 'min_unit': 2,
        'max_unit': 0x7FFFFFFF, 'step_size': 1}
    placement = embedded.EmbeddedPlacement()
    try:
        client = placement.start()
        runner.Simulation(scenario, client).build()
        assert client.request(
            'GET', f'/resource_providers/{scenario.hosts[0].uuid}/'
            'inventories').json()['inventories']['VCPU'] == \
            provider.inventories['VCPU']
    finally:
        placement.stop()
