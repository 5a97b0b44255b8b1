"""``simulate --engine fast`` decides exactly as the default engine.

Every example and a table of seeded random scenarios run through both
engines; the reports (placements, failures with every host's reasons,
audit) must be identical. The random scenarios mix what could make hosts of
one class differ: hosts in several or no domains of a scope, weight
multipliers in aggregate metadata, traits and forbidden aggregates,
targeted domains, capacity running out in the middle of multi-instance
boots, boots without a group (Placement's ``limit``), deletes, membership
changes and policy updates.
"""

import glob
import json
import logging
import os
import random
import uuid

import pytest

from benchmarks import worlds
from nova_scoped_policies import policy
from nova_scoped_policies.cmd import main as cli
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import fake
from nova_scoped_policies.policy import parser
from nova_scoped_policies.simulator import embedded
from nova_scoped_policies.simulator import fast
from nova_scoped_policies.simulator import runner
from nova_scoped_policies.simulator import scenario as sc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, 'examples', '*.yaml')))
ZONE_NS = '6f72348f-df5d-4e0f-a043-4be92996dbfe'
LICENSED = 'CUSTOM_WINDOWS_LICENSED'
SIZES = [{'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10},
         {'VCPU': 4, 'MEMORY_MB': 8192, 'DISK_GB': 40},
         {'VCPU': 8, 'MEMORY_MB': 16384, 'DISK_GB': 100}]
HARD = ['anti-affinity:host', 'anti-affinity:rack', 'affinity:rack',
        'affinity:row', 'anti-affinity:zone', 'affinity:host']
SOFT = ['soft-affinity:host', 'soft-anti-affinity:host',
        'soft-affinity:rack', 'soft-anti-affinity:rack',
        'soft-affinity:zone', 'soft-anti-affinity:row']


def run(scenario: sc.Scenario, engine: str) -> dict:
    if engine == 'fast':
        report = fast.FastSimulation(scenario, fake.FakePlacement()).run()
    else:
        placement = embedded.EmbeddedPlacement()
        try:
            report = runner.Simulation(scenario, placement.start()).run()
        finally:
            placement.stop()
    return timeless(report)


def timeless(report: dict) -> dict:
    """``report`` without the seconds things took."""
    report['stats'].pop('seconds')
    for plan in report.get('plans', {}).values():
        plan.pop('seconds')
    for entry in report.get('repairs', []) + report.get('resilience', []):
        entry.pop('seconds')
    return report


def _document(rng: random.Random, zone_id: str) -> dict:
    """A valid policy document (contradictions are drawn again)."""
    while True:
        document = _draw_document(rng, zone_id)
        try:
            parser.parse_document(document)
        except policy.PolicyError:
            continue
        return document


def _draw_document(rng: random.Random, zone_id: str) -> dict:
    if rng.random() < 0.15:
        return {'llmn': {'level1': rng.choice(['rack', 'row']),
                         'level2': 'host', 'n': 2},
                'rules': {'size': rng.randint(3, 6)}}
    policies = []
    if rng.random() < 0.8:
        policies.append(rng.choice(HARD))
    if rng.random() < 0.25:
        policies.append(f'affinity:zone:{zone_id}')
    policies += rng.sample(SOFT, rng.randint(0, 2))
    policies = list(dict.fromkeys(policies)) or ['soft-anti-affinity:host']
    rules = {}
    if rng.random() < 0.4:
        rules['max_server_per_rack'] = rng.randint(1, 3)
    if rng.random() < 0.2:
        rules['max_server_per_host'] = 2
    if rng.random() < 0.15:
        rules['min_domains_rack'] = 2
        rules['size'] = rng.randint(3, 5)
    # rules only for the scopes the policies use
    used = {p.split(':')[1] for p in policies if p.startswith('anti')}
    for key in [k for k in rules if k.startswith('max_server_per_')]:
        if key[len('max_server_per_'):] not in used:
            del rules[key]
    if 'min_domains_rack' not in rules:
        rules.pop('size', None)
    return {'policies': policies, 'rules': rules} if rules else \
        {'policies': policies}


def random_scenario(seed: int) -> sc.Scenario:
    return sc.parse(random_data(seed))


def random_data(seed: int) -> dict:
    """The document of :func:`random_scenario`."""
    rng = random.Random(seed)
    hosts = [f'h{i}' for i in range(1, rng.randint(6, 24) + 1)]
    licensed = set(rng.sample(hosts, 2))
    data: dict = {
        'scopes': {'rack': {}, 'row': {},
                   'zone': {'allow_identifiers': True,
                            'obfuscate_identifiers': rng.random() < 0.5,
                            'namespace': ZONE_NS}},
        'hosts': [{'name': h, 'resources': dict(rng.choice([
            {'VCPU': 8, 'MEMORY_MB': 16384, 'DISK_GB': 200},
            {'VCPU': 16, 'MEMORY_MB': 32768, 'DISK_GB': 400},
            {'VCPU': 32, 'MEMORY_MB': 65536, 'DISK_GB': 1000}])),
            'traits': [LICENSED] if h in licensed else []} for h in hosts],
        'aggregates': [], 'groups': [], 'requests': [],
        'config': {
            'enable_scoped_policy_query_filter': rng.random() < 0.6,
            'enable_forbidden_aggregates_filter': rng.random() < 0.6,
            'soft_affinity_weight_multiplier': rng.choice([0.0, 1.0, 2.5]),
            'soft_anti_affinity_weight_multiplier': rng.choice([1.0, 3.0]),
        },
    }
    aggs = data['aggregates']
    racks = rng.randint(2, 5)
    for k in range(racks):
        members = [h for i, h in enumerate(hosts) if i % racks == k]
        # some hosts in no rack, one sometimes in two
        members = [h for h in members if rng.random() > 0.1]
        if rng.random() < 0.2:
            members.append(rng.choice(hosts))
        aggs.append({'name': f'rack-{k}', 'scope': 'rack',
                     'hosts': sorted(set(members))})
    half = len(hosts) // 2
    aggs.append({'name': 'row-a', 'scope': 'row', 'hosts': hosts[:half]})
    aggs.append({'name': 'row-b', 'scope': 'row', 'hosts': hosts[half:]})
    zones = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in 'ab']
    cut = rng.randint(2, len(hosts) - 2)
    aggs.append({'name': 'zone-a', 'uuid': zones[0], 'scope': 'zone',
                 'hosts': hosts[:cut]})
    aggs.append({'name': 'zone-b', 'uuid': zones[1], 'scope': 'zone',
                 'hosts': hosts[cut:]})
    # policies target either zone: zone-b's hosts come last by name
    zone_uuid = rng.choice(zones)
    aggs.append({'name': 'licensed', 'hosts': sorted(licensed),
                 'metadata': {f'trait:{LICENSED}': 'required'}})
    aggs.append({'name': 'heavy', 'hosts': rng.sample(hosts, 3),
                 'metadata': {
                     'scoped_soft_anti_affinity_weight_multiplier':
                         str(rng.choice([0.5, 4.0])),
                     'scoped_soft_affinity_weight_multiplier': '0.25'}})
    project = 'tenant-a'
    scopes = sc.parse({'scopes': data['scopes'], 'hosts': data['hosts'],
                       'aggregates': aggs}).topology()
    zone_id = scopes.identifier_for('zone', zone_uuid, project)
    groups = [f'g{i}' for i in range(rng.randint(1, 3))]
    for name in groups:
        data['groups'].append(dict(name=name, project=project,
                                   **_document(rng, zone_id)))
    servers: list = []
    # server -> its group as the policy service counts it: booted into
    # it (Nova's) or added, and not removed
    member_of: dict = {}
    for i in range(rng.randint(8, 18)):
        roll = rng.random()
        if roll < 0.12 and servers:
            data['requests'].append({'delete': servers.pop(
                rng.randrange(len(servers)))})
            member_of.pop(data['requests'][-1]['delete'], None)
        elif roll < 0.2 and servers:
            server, group = rng.choice(servers), rng.choice(groups)
            kind = rng.choice(['add_member', 'remove_member'])
            if kind == 'add_member' and \
                    member_of.get(server, group) != group:
                kind = 'remove_member'   # one group per instance
            if kind == 'add_member':
                member_of[server] = group
            elif member_of.get(server) == group:
                del member_of[server]
            data['requests'].append({kind: {'group': group,
                                            'server': server}})
        elif roll < 0.25:
            data['requests'].append({'update_group': dict(
                group=rng.choice(groups), **_document(rng, zone_id))})
        else:
            count = rng.randint(1, 3)
            boot = {'name': f'b{i}', 'count': count,
                    'flavor': {'resources': dict(rng.choice(SIZES))}}
            if rng.random() < 0.85:
                boot['group'] = rng.choice(groups)
            if rng.random() < 0.15:
                boot['image'] = {'properties': {
                    f'trait:{LICENSED}': 'required'}}
            data['requests'].append({'boot': boot})
            booted = [f'b{i}-{k}' for k in range(1, count + 1)]
            servers += booted
            if 'group' in boot:
                member_of.update((s, boot['group']) for s in booted)
    return data


@pytest.mark.parametrize('path', EXAMPLES,
                         ids=[os.path.basename(p) for p in EXAMPLES])
def test_examples(path):
    scenario = sc.load(path)
    assert run(scenario, 'fast') == run(scenario, 'nova')


@pytest.mark.parametrize('seed', range(40))
def test_random_scenarios(seed):
    scenario = random_scenario(seed)
    nova = run(scenario, 'nova')
    assert run(scenario, 'fast') == nova


FLAVOR = {'resources': {'VCPU': 4, 'MEMORY_MB': 8192, 'DISK_GB': 10}}


@pytest.mark.parametrize('seed', [6, 9])
def test_a_host_a_boot_fills_still_weighs_in_it(seed):
    """Hosts of several sizes, boots of 2 to 4 servers: a host the boot
    fills stays one of its candidates (nova keeps Placement's answer for
    the whole boot), so it still counts in the normalisation of the
    weights of the others."""
    rng = random.Random(seed)
    hosts = [{'name': f'h{i}', 'resources': {
        'VCPU': rng.choice([8, 16, 32, 64]),
        'MEMORY_MB': rng.choice([8192, 16384, 24576, 32768, 65536]),
        'DISK_GB': rng.choice([15, 25, 100, 1000])}} for i in range(1, 5)]
    scenario = sc.parse({'hosts': hosts, 'requests': [
        {'boot': {'name': f'b{k}', 'count': rng.randint(2, 4),
                  'flavor': FLAVOR}} for k in range(2)]})
    assert run(scenario, 'fast') == run(scenario, 'nova')


def test_multipliers_in_aggregates_after_a_request_without_weights():
    """Our weighers' per-host multiplier (aggregate metadata) holds for a
    request with soft policies after one without."""
    hosts = [{'name': f'h{i}', 'resources': {
        'VCPU': 8 * i, 'MEMORY_MB': 16384 * i, 'DISK_GB': 200 * i}}
        for i in range(1, 5)]
    small = {'resources': {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}}
    scenario = sc.parse({
        'hosts': hosts,
        'aggregates': [{'name': 'heavy', 'hosts': [h['name'] for h in hosts],
                        'metadata': {
                            'scoped_soft_affinity_weight_multiplier': '0'}}],
        'config': {'soft_affinity_weight_multiplier': 50.0},
        'groups': [{'name': 'g', 'project': 'tenant-a',
                    'policies': ['soft-affinity:host']}],
        'requests': [
            {'boot': {'name': 'a', 'flavor': small}},
            {'boot': {'name': 'g', 'group': 'g', 'count': 2,
                      'flavor': small}}]})
    nova = run(scenario, 'nova')
    assert run(scenario, 'fast') == nova
    # the multiplier 0 of the aggregate: nova's weighers spread them
    hosts_of = {p['server']: p['host'] for p in nova['placements']}
    assert hosts_of['g-1'] != hosts_of['g-2']


def test_a_flavor_that_names_a_host():
    """ComputeCapabilitiesFilter reads a host's own name
    (``capabilities:hypervisor_hostname``): every host stands alone."""
    hosts = [{'name': f'h{i}', 'resources': {
        'VCPU': 8, 'MEMORY_MB': 16384, 'DISK_GB': 100}} for i in (1, 2, 3)]
    scenario = sc.parse({'hosts': hosts, 'requests': [{'boot': {
        'name': 'a', 'flavor': {
            'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
            'extra_specs': {'capabilities:hypervisor_hostname': 'h2'}}}}]})
    nova = run(scenario, 'nova')
    assert [p['host'] for p in nova['placements']] == ['h2']
    assert run(scenario, 'fast') == nova


def test_a_query_placement_refuses_fails_the_boot_only():
    """A trait no provider has: Placement answers 400, which nova takes
    for no candidates (NoValidHost); the next boot goes on."""
    flavor = {'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
    scenario = sc.parse({
        'hosts': [{'name': 'h1', 'resources': {
            'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 40}}],
        'requests': [
            {'boot': {'name': 'a', 'flavor': flavor, 'image': {
                'properties': {'trait:CUSTOM_NOBODY': 'required'}}}},
            {'boot': {'name': 'b', 'flavor': flavor}}]})
    nova = run(scenario, 'nova')
    assert [f['server'] for f in nova['failures']] == ['a-1']
    assert [p['server'] for p in nova['placements']] == ['b-1']
    assert run(scenario, 'fast') == nova


HOSTS = 300


@pytest.mark.parametrize('world', worlds.WORLDS)
def test_the_benchmarks_worlds_at_300_hosts(world):
    """Every decision on each world the benchmarks measure (a cloud of
    hosts whose sizes, traits and usage differ, and the uniform one), at
    300 hosts: placements, failures and their reasons, audit. The
    simulator benchmark's full run checks the cloud world at 1,000 hosts
    (``sim_engines_agree_cloud_1k``): minutes of nova's weighers, which
    prove no more than here."""
    data = worlds.cloud(HOSTS) if world == 'cloud' else worlds.uniform(
        HOSTS, groups=20, members=10)
    scenario = sc.parse(data)
    # nova's weight handler logs every host's weights at DEBUG for each
    # weigher and instance: a million log records, which the test
    # harness would keep (gigabytes at 1,000 hosts)
    logging.disable(logging.INFO)
    try:
        fast_report = run(scenario, 'fast')
        stats = fast_report['stats']
        # some of the cloud's boots fail, each with its reasons
        assert 0.9 * HOSTS < stats['placed'] < HOSTS if world == 'cloud' \
            else stats['placed'] == 200
        assert fast_report == run(scenario, 'nova')
    finally:
        logging.disable(logging.NOTSET)


def test_random_scenarios_exercise_what_matters():
    """The table above covers failures, rejections and every request."""
    seen = {'failed': 0, 'placed': 0, 'reasons': set()}
    kinds = set()
    for seed in range(40):
        scenario = random_scenario(seed)
        kinds.update(type(r).__name__ for _, r in scenario.requests)
        report = run(scenario, 'nova')
        seen['failed'] += len(report['failures'])
        seen['placed'] += len(report['placements'])
        for failure in report['failures']:
            for reasons in failure['rejections'].values():
                seen['reasons'].update(r.split(':')[0] for r in reasons)
    assert kinds == {'Boot', 'Delete', 'Membership', 'UpdateGroup'}
    assert seen['failed'] >= 10 and seen['placed'] >= 200
    assert {'anti-affinity', 'affinity', 'placement'} <= seen['reasons']


@pytest.mark.parametrize('name', ['database-cluster.yaml',
                                  'licensed-windows.yaml'])
def test_cli_engine_fast_prints_the_same_report(name, capsys):
    path = os.path.join(ROOT, 'examples', name)
    reports = []
    for engine in ('nova', 'fast'):
        assert cli.main(['simulate', path, '--format', 'json',
                         '--engine', engine]) == 0
        report = json.loads(capsys.readouterr().out)
        report['stats'].pop('seconds')
        report['stats'].pop('process_seconds')
        reports.append(report)
    assert reports[0] == reports[1]


def test_cli_engine_fast_needs_the_embedded_placement(capsys):
    assert cli.main(['simulate', EXAMPLES[0], '--engine', 'fast',
                     '--placement-url', 'http://127.0.0.1:1/']) == 2
    err = capsys.readouterr().err
    assert '--engine fast' in err and '--placement-url' in err


def test_in_process_client_speaks_the_fakes_api():
    """Same handlers as over HTTP: bodies, microversions and errors."""
    app = fake.FakePlacement()
    client = embedded.InProcessClient(app)
    rp = str(uuid.uuid4())
    assert client.create_provider('h1', rp)['uuid'] == rp
    assert client.max_version() == '%d.%d' % fake.MAX_VERSION
    with pytest.raises(pc.PlacementError) as caught:
        client.create_provider('h1', str(uuid.uuid4()))
    assert caught.value.status == 409
    assert 'Conflicting resource provider name: h1' in str(caught.value)


def test_claim_is_put_allocations_in_process():
    app = fake.FakePlacement()
    client = embedded.InProcessClient(app)
    rp = str(uuid.uuid4())
    generation = client.create_provider('h1', rp)['generation']
    client.set_inventory(rp, generation, {'VCPU': {'total': 4}})
    first, second, third = (str(uuid.uuid4()) for _ in range(3))
    assert app.model.claim(first, {rp: {'VCPU': 3}}, 'p', 'u')
    assert not app.model.claim(second, {rp: {'VCPU': 2}}, 'p', 'u')   # 409
    assert not app.model.claim(first, {rp: {'VCPU': 1}}, 'p', 'u')    # exists
    assert app.model.claim(third, {rp: {'VCPU': 1}}, 'p', 'u')
    assert client.get_allocations(first)['allocations'][rp][
        'resources'] == {'VCPU': 3}
    assert client.request('GET', f'/resource_providers/{rp}/usages').json()[
        'usages'] == {'VCPU': 4}
