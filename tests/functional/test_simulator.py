"""The simulator on the examples: outcomes, fake vs real Placement, CLI."""

import collections
import gc
import glob
import io
import json
import os
import subprocess
import sys

import pytest
import yaml

from nova_scoped_policies.cmd import main as cli
from nova_scoped_policies.placement import fake
from nova_scoped_policies.simulator import embedded
from nova_scoped_policies.simulator import fast
from nova_scoped_policies.simulator.handlers import boot as boot_handler
from nova_scoped_policies.simulator import runner
from nova_scoped_policies.simulator import scenario as sc
from tests import placement_fixtures as pf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, 'examples', '*.yaml')))


def simulate(name, placement=pf.FakePlacementFixture):
    fixture = placement()
    fixture.setUp()
    try:
        scenario = sc.load(os.path.join(ROOT, 'examples', name))
        return runner.Simulation(scenario, pf.client_for(fixture)).run()
    finally:
        fixture.cleanUp()


def hosts(result):
    return {p['server']: p['host'] for p in result['placements']}


def domains(result, scope):
    return collections.Counter(p['domains'].get(scope)
                               for p in result['placements'])


def test_rack_anti_affinity():
    result = simulate('rack-anti-affinity.yaml')
    assert len(result['placements']) == 6
    assert domains(result, 'rack') == {'rack-1': 2, 'rack-2': 2,
                                       'rack-3': 2}
    assert len(set(hosts(result).values())) == 6
    (failure,) = result['failures']
    assert failure['server'] == 'too-many-1'
    assert failure['rejections']['h1'] == [
        'anti-affinity:host: h1 holds 1 of max 1',
        'anti-affinity:rack: rack-1 holds 2 of max 2']
    assert result['audit']['db']['violations'] == []


def test_maintenance_zones_with_a_member_added_later():
    result = simulate('maintenance-zone-anti-affinity.yaml')
    placed = hosts(result)
    assert len(domains(result, 'maintenance_zone')) == 4
    assert [f['server'] for f in result['failures']] == ['web-extra-1']
    members = {m['server'] for m in result['audit']['web']['members']}
    assert 'web-first-1' in members and 'web-first-1' in placed


def test_ip_zone_affinity_keeps_one_zone():
    result = simulate('ip-zone-affinity.yaml')
    assert len(domains(result, 'ip_zone')) == 1
    assert len(result['placements']) == 3


def test_database_cluster_hard_hosts_soft_switch():
    result = simulate('database-cluster.yaml')
    assert len(set(hosts(result).values())) == 4
    assert len(domains(result, 'switch')) == 1


def test_targeted_obfuscated_zone():
    result = simulate('targeted-obfuscated-zone.yaml')
    assert domains(result, 'zone') == {'zone-a': 3}


def test_licensed_windows():
    result = simulate('licensed-windows.yaml')
    placed = hosts(result)
    windows = {s: h for s, h in placed.items() if s.startswith('windows')}
    assert set(windows.values()) == {'h1'}
    assert 'h1' not in {h for s, h in placed.items()
                        if not s.startswith('windows')}
    assert result['failures'] == []


def test_llmn_seven_vms():
    result = simulate('llmn-7vm.yaml')
    racks = domains(result, 'rack')
    assert len(result['placements']) == 7
    assert len(set(hosts(result).values())) == 7
    assert len(racks) >= 2 and max(racks.values()) <= 4
    assert result['audit']['appservers']['violations'] == []


@pytest.mark.parametrize('path', EXAMPLES,
                         ids=[os.path.basename(p) for p in EXAMPLES])
def test_fake_and_real_placement_decide_alike(path):
    name = os.path.basename(path)
    fake = simulate(name)
    real = simulate(name, placement=pf.real_placement)
    assert fake['placements'] == real['placements']
    assert fake['failures'] == real['failures']
    assert fake['audit'] == real['audit']


def test_cli_json(capsys):
    assert cli.main(['simulate', os.path.join(ROOT, 'examples',
                                              'rack-anti-affinity.yaml'),
                     '--format', 'json']) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {'placements', 'failures', 'audit', 'stats', 'final',
                        'servers'}
    assert out['stats']['requests'] == 3 and out['stats']['placed'] == 6


def test_cli_table(capsys):
    assert cli.main(['simulate', os.path.join(ROOT, 'examples',
                                              'licensed-windows.yaml')]) == 0
    out = capsys.readouterr().out
    assert 'windows-1     h1' in out
    assert '3 requests, 10 servers placed, 0 failed boots' in out


def test_cli_malformed_scenario_names_the_key(tmp_path, capsys):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('hosts: [{name: h1, resources: {VCPU: 0}}]\n')
    assert cli.main(['simulate', str(bad)]) == 2
    err = capsys.readouterr().err
    assert 'hosts[0].resources.VCPU' in err and 'integer >= 1' in err


def test_cli_refuses_old_placement(capsys, monkeypatch):
    from nova_scoped_policies.placement import fake
    from nova_scoped_policies.simulator import embedded
    real_init = embedded.EmbeddedPlacement.__init__

    def old(self):
        real_init(self)
        self.app = fake.FakePlacement(max_version='1.29')
    monkeypatch.setattr(embedded.EmbeddedPlacement, '__init__', old)
    assert cli.main(['simulate', EXAMPLES[0], '--engine', 'nova']) == 1
    assert 'needs 1.32' in capsys.readouterr().err


def test_cli_plot(tmp_path, capsys):
    png = tmp_path / 'groups.png'
    assert cli.main(['simulate', os.path.join(ROOT, 'examples',
                                              'llmn-7vm.yaml'),
                     '--plot', str(png)]) == 0
    data = png.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n' and len(data) > 5000


@pytest.mark.parametrize('fmt', ['table', 'json'])
def test_cli_plot_without_groups_keeps_the_report(tmp_path, capsys, fmt):
    assert cli.main(['simulate', os.path.join(ROOT, 'examples',
                                              'licensed-windows.yaml'),
                     '--format', fmt, '--plot', str(tmp_path / 'x.png')]) == 1
    captured = capsys.readouterr()
    assert 'no group or stack to plot' in captured.err
    if fmt == 'json':
        assert json.loads(captured.out)['stats']['placed'] == 10
    else:
        assert '10 servers placed' in captured.out


def test_cli_plot_to_an_unwritable_path_keeps_the_report(tmp_path, capsys):
    png = tmp_path / 'missing-dir' / 'groups.png'
    assert cli.main(['simulate', os.path.join(ROOT, 'examples',
                                              'llmn-7vm.yaml'),
                     '--format', 'json', '--plot', str(png)]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)['stats']['placed'] >= 1
    assert f'--plot {png}' in captured.err and not png.exists()


def _run(data, engine):
    """Simulate the scenario ``data`` with ``engine``."""
    scenario = sc.parse(data)
    if engine == 'fast':
        return fast.FastSimulation(scenario, fake.FakePlacement()).run()
    fixture = pf.FakePlacementFixture()
    fixture.setUp()
    try:
        return runner.Simulation(scenario, pf.client_for(fixture)).run()
    finally:
        fixture.cleanUp()


def _plain_boots(config=None):
    return {'hosts': [{'name': f'h{i}', 'resources': {
        'VCPU': 8, 'MEMORY_MB': 16384, 'DISK_GB': 100}} for i in range(1, 5)],
        'config': config,
        'requests': [{'boot': {'name': name, 'count': count, 'flavor': {
            'resources': {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}}}}
            for name, count in (('a', 1), ('b', 1), ('c', 2))]}


@pytest.mark.parametrize('engine', ['nova', 'fast'])
def test_nova_weighers_spread_plain_boots(engine):
    """Without ``config``, nova's default weighers run as in the README's
    nova.conf: four servers on four empty hosts go to four hosts, the
    multi-instance boot included (its first server's claim weighs on the
    second, as nova's HostState consumes it)."""
    result = _run(_plain_boots(), engine)
    assert hosts(result) == {'a-1': 'h1', 'b-1': 'h2', 'c-1': 'h3',
                             'c-2': 'h4'}


@pytest.mark.parametrize('engine', ['nova', 'fast'])
def test_nova_weight_multipliers_from_config(engine):
    """Negative resource multipliers stack servers, as in nova."""
    result = _run(_plain_boots({'ram_weight_multiplier': -1.0,
                                'cpu_weight_multiplier': -1.0,
                                'disk_weight_multiplier': -1.0,
                                'io_ops_weight_multiplier': 0.0}), engine)
    assert set(hosts(result).values()) == {'h1'}


@pytest.mark.parametrize('engine', ['nova', 'fast'])
def test_enabled_filters_from_config(engine):
    """A filter left out of ``enabled_filters`` does not run: without
    ScopedAntiAffinityFilter a hard anti-affinity:rack no longer holds
    (the soft weighers still spread when they can)."""
    data = {'scopes': {'rack': {}},
            'aggregates': [{'name': 'rack-1', 'scope': 'rack',
                            'hosts': ['h1', 'h2']}],
            'hosts': [{'name': h, 'resources': {'VCPU': 8}}
                      for h in ('h1', 'h2')],
            'groups': [{'name': 'g', 'policies': ['anti-affinity:rack']}],
            'requests': [{'boot': {'name': 'g', 'group': 'g', 'count': 2,
                                   'flavor': {'resources': {'VCPU': 1}}}}]}
    assert _run(data, engine)['stats']['placed'] == 0
    data['config'] = {'enabled_filters': ['ComputeFilter']}
    assert _run(data, engine)['stats']['placed'] == 2


def _custom_rc_scenario():
    return {
        'hosts': [{'name': 'h1', 'resources': {'VCPU': 16}},
                  {'name': 'h2', 'resources': {'VCPU': 16,
                                               'CUSTOM_GPU': 2}},
                  {'name': 'h3', 'resources': {'VCPU': 16,
                                               'CUSTOM_GPU': 1}}],
        'requests': [{'boot': {'name': name, 'count': count, 'flavor': {
            'resources': {'VCPU': 1, 'CUSTOM_GPU': 1}}}}
            for name, count in (('gpu', 3), ('more', 1))]}


@pytest.mark.parametrize('engine', ['nova', 'fast'])
def test_custom_resource_classes_are_placed_and_counted(engine):
    """A flavor's CUSTOM_GPU goes to Placement as nova sends it (the
    flavor's resources:CUSTOM_GPU extra spec): only hosts with a free GPU
    take a server; the fourth (a later boot) finds none."""
    result = _run(_custom_rc_scenario(), engine)
    placed = collections.Counter(hosts(result).values())
    assert placed == {'h2': 2, 'h3': 1}
    assert result['stats']['placed'] == 3
    assert [f['server'] for f in result['failures']] == ['more-1']


@pytest.mark.parametrize('where, rc', [
    ('hosts[0].resources', 'VCPUS'),
    ('hosts[0].resources', 'GPU'),
    ('requests[0].boot.flavor.resources', 'VCPUS'),
    ('requests[0].boot.flavor.resources', 'custom_gpu'),
])
def test_unknown_resource_classes_are_refused(tmp_path, capsys, where, rc):
    data = _custom_rc_scenario()
    if where.startswith('hosts'):
        data['hosts'][0]['resources'][rc] = 1
    else:
        data['requests'][0]['boot']['flavor']['resources'][rc] = 1
    bad = tmp_path / 'bad.yaml'
    bad.write_text(yaml.safe_dump(data))
    assert cli.main(['simulate', str(bad)]) == 2
    err = capsys.readouterr().err
    assert f'{where}.{rc}: ' in err and 'CUSTOM_' in err


@pytest.mark.parametrize('group, field', [
    ({'policies': ['anti-affinity:rackk']}, 'groups[0].policies[0]'),
    ({'policies': ['anti-affinity:rack', 'soft-affinity:zone']},
     'groups[0].policies[1]'),
])
def test_policies_on_undefined_scopes_are_refused(tmp_path, capsys, group,
                                                  field):
    """As the policy service refuses them: exit 2, the key named."""
    data = {'scopes': {'rack': {}},
            'aggregates': [{'name': 'rack-1', 'scope': 'rack',
                            'hosts': ['h1']}],
            'hosts': [{'name': 'h1', 'resources': {'VCPU': 4}}],
            'groups': [dict(group, name='g')],
            'requests': [{'boot': {'name': 's', 'group': 'g', 'flavor': {
                'resources': {'VCPU': 1}}}}]}
    bad = tmp_path / 'bad.yaml'
    bad.write_text(yaml.safe_dump(data))
    assert cli.main(['simulate', str(bad)]) == 2
    err = capsys.readouterr().err
    assert f'{field}: ' in err and 'unknown scope' in err
    # and the same policy through update_group
    del data['groups'][0]['policies']
    data['requests'].append({'update_group': dict(group, group='g')})
    with pytest.raises(sc.ScenarioError) as caught:
        sc.parse(data)
    assert str(caught.value).startswith('requests[1].update_group.')


@pytest.mark.parametrize('requests, field', [
    ([], 'groups[0].policies[0]'),
    ([{'update_group': {'group': 'h', 'policies': [
        'affinity:zone:00000000-0000-4000-8000-000000000000']}}],
     'requests[0].update_group.policies[0]'),
])
def test_identifiers_the_policy_service_refuses(requests, field):
    """Groups go through the policy store with real identifiers: one the
    project cannot target is refused up front, as the API refuses it."""
    with pytest.raises(sc.ScenarioError) as caught:
        sc.parse({
            'scopes': {'zone': {'allow_identifiers': True}},
            'aggregates': [{'name': 'zone-a', 'scope': 'zone',
                            'hosts': ['h1']}],
            'hosts': [{'name': 'h1', 'resources': {'VCPU': 4}}],
            'groups': [{'name': 'g', 'policies': [
                'affinity:zone:00000000-0000-4000-8000-000000000000']}
                if not requests else
                {'name': 'h', 'policies': ['anti-affinity:zone']}],
            'requests': requests})
    assert str(caught.value).startswith(f'{field}: ')
    assert 'no domain of scope zone has this identifier' in str(caught.value)


def test_an_instance_is_added_to_one_group_at_most():
    base = {'hosts': [{'name': 'h1', 'resources': {'VCPU': 4}}],
            'groups': [{'name': 'g'}, {'name': 'h'}]}
    boot = {'boot': {'name': 's', 'flavor': {'resources': {'VCPU': 1}}}}
    with pytest.raises(sc.ScenarioError) as caught:
        sc.parse(dict(base, requests=[
            boot, {'add_member': {'group': 'g', 'server': 's-1'}},
            {'add_member': {'group': 'h', 'server': 's-1'}}]))
    assert str(caught.value).startswith('requests[2].add_member.server: ')
    assert 'is a member of a server group already' in str(caught.value)
    assert "(group 'g';" in str(caught.value)
    # booted into a group (Nova's), as the service knows from Nova: not
    # added to another until removed from it
    booted = {'boot': {'name': 's', 'group': 'g',
                       'flavor': {'resources': {'VCPU': 1}}}}
    with pytest.raises(sc.ScenarioError) as caught:
        sc.parse(dict(base, requests=[
            booted, {'add_member': {'group': 'h', 'server': 's-1'}}]))
    assert str(caught.value).startswith('requests[1].add_member.server: ')
    sc.parse(dict(base, requests=[
        booted, {'remove_member': {'group': 'g', 'server': 's-1'}},
        {'add_member': {'group': 'h', 'server': 's-1'}},
        {'remove_member': {'group': 'h', 'server': 's-1'}},
        {'add_member': {'group': 'g', 'server': 's-1'}}]))
    # after remove_member (or a delete) it may join another group
    sc.parse(dict(base, requests=[
        boot, {'add_member': {'group': 'g', 'server': 's-1'}},
        {'remove_member': {'group': 'g', 'server': 's-1'}},
        {'add_member': {'group': 'h', 'server': 's-1'}}]))


def test_groups_live_in_the_policy_store():
    """Policies with real ids, members added through the service; the
    scheduler reads both from the store (the boot carries no hint)."""
    with open(os.path.join(ROOT, 'examples',
                           'targeted-obfuscated-zone.yaml')) as handle:
        data = yaml.safe_load(handle)
    scenario = sc.parse({
        **data,
        'requests': [
            {'boot': {'name': 'app', 'group': 'pinned', 'count': 2,
                      'flavor': {'resources': {'VCPU': 2}}}},
            {'boot': {'name': 'loose', 'flavor': {'resources': {
                'VCPU': 2}}}},
            {'add_member': {'group': 'pinned', 'server': 'loose-1'}},
            {'boot': {'name': 'late', 'group': 'pinned',
                      'flavor': {'resources': {'VCPU': 2}}}}]})
    fixture = pf.FakePlacementFixture()
    fixture.setUp()
    seen = {}
    try:
        sim = runner.Simulation(scenario, pf.client_for(fixture))
        real_boot = boot_handler.handle

        def boot(sim, request):
            placed = real_boot(sim, request)
            stored = sim.store.get_group(scenario.groups['pinned'].uuid)
            seen[request.name] = (stored.document.to_dict(),
                                  list(stored.members))
            return placed
        boot_handler.handle = boot
        try:
            result = sim.run()
        finally:
            boot_handler.handle = real_boot
    finally:
        fixture.cleanUp()
    zone_a = '0b7d4a3e-2f0c-4a57-9d55-3f3c8b1f0a11'
    assert seen['late'] == ({'policies': [f'affinity:zone:{zone_a}'],
                             'rules': {}},
                            [sc.stable_uuid('server', 'loose-1')])
    where = {p['server']: p['host'] for p in result['placements']}
    assert {where[s] for s in ('app-1', 'app-2', 'late-1')} <= {'h1', 'h2'}
    assert sorted(m['server'] for m in result['audit']['pinned'][
        'members']) == ['app-1', 'app-2', 'late-1', 'loose-1']


def test_cli_default_engine_is_fast_on_the_embedded_placement(capsys,
                                                              monkeypatch):
    from nova_scoped_policies.simulator import embedded
    from nova_scoped_policies.simulator import fast
    ran = []
    real_run = fast.FastSimulation.run

    def run(self, *args, **kwargs):
        ran.append(type(self))
        return real_run(self, *args, **kwargs)

    def no_wsgi(self):
        raise AssertionError('the fast engine calls Placement in-process')
    monkeypatch.setattr(fast.FastSimulation, 'run', run)
    monkeypatch.setattr(embedded.EmbeddedPlacement, 'start', no_wsgi)
    assert cli.main(['simulate', os.path.join(ROOT, 'examples',
                                              'rack-anti-affinity.yaml'),
                     '--format', 'json']) == 0
    assert ran == [fast.FastSimulation]
    assert json.loads(capsys.readouterr().out)['stats']['placed'] == 6


class _Recorder:
    def __init__(self):
        self.phases = []

    def phase(self, name, total):
        self.phases.append([name, total, 0])

    def advance(self, done=1):
        self.phases[-1][2] += done


def _boots(scenario):
    """The servers a scenario boots: its boots' and its plans'."""
    return sum(r.count for _, r in scenario.requests
               if isinstance(r, sc.Boot)) + sum(
        len(scenario.stacks[r.stack].stack.servers)
        for _, r in scenario.requests
        if isinstance(r, sc.PlanRequest) and r.kind == 'boot_plan')


@pytest.mark.parametrize('engine', ['nova', 'fast'])
@pytest.mark.parametrize('name, servers', [
    ('rack-anti-affinity', 7),          # one of them fails
    ('stack-joint-vs-greedy', 20),      # 10 of them from a plan
])
def test_progress_counts_hosts_then_servers(engine, name, servers):
    """The hosts as they are built, then every server booted, placed or
    failed, with either engine."""
    scenario = sc.load(os.path.join(ROOT, 'examples', f'{name}.yaml'))
    assert _boots(scenario) == servers
    recorder = _Recorder()
    app = fake.FakePlacement()
    simulation = fast.FastSimulation(scenario, app) if engine == 'fast' \
        else runner.Simulation(scenario, embedded.InProcessClient(app))
    simulation.run(recorder)
    assert recorder.phases == [
        ['hosts', len(scenario.hosts), len(scenario.hosts)],
        ['servers', servers, servers]]


def test_the_progress_bar_is_rich():
    out = io.StringIO()
    with cli._Bar(out) as bar:
        bar.phase('hosts', 3)
        bar.advance(3)
        bar.phase('servers', 5)
        bar.advance(5)
    text = out.getvalue()
    assert 'hosts' in text and '3/3' in text
    assert 'servers' in text and '5/5' in text


class _FreezeRecorder(_Recorder):
    """Also records how many objects the collector had frozen at each
    server."""

    def __init__(self):
        super().__init__()
        self.frozen = []

    def advance(self, done=1):
        super().advance(done)
        if self.phases[-1][0] == 'servers':
            self.frozen.append(gc.get_freeze_count())


@pytest.mark.parametrize('frozen_before', [False, True])
def test_the_world_is_frozen_while_requests_run(frozen_before):
    """The objects alive once the world is built are out of the
    collector's sight during the requests, and back after; a caller's own
    freeze is left as it was."""
    scenario = sc.load(os.path.join(ROOT, 'examples',
                                    'rack-anti-affinity.yaml'))
    recorder = _FreezeRecorder()
    assert gc.get_freeze_count() == 0
    if frozen_before:
        gc.freeze()
    try:
        fast.FastSimulation(scenario, fake.FakePlacement()).run(recorder)
        assert recorder.frozen and all(n > 0 for n in recorder.frozen)
        # the caller's frozen objects (less those freed meanwhile) still
        # are; without one, none is
        assert (gc.get_freeze_count() > 0) == frozen_before
    finally:
        gc.unfreeze()


@pytest.mark.parametrize('frozen_before', [False, True])
def test_the_command_gives_the_collector_back(frozen_before, capsys):
    """Called in-process, ``simulate`` leaves the collector as it found
    it: on, and nothing of its own left frozen (only a process that ends
    with it keeps what it made frozen to the exit)."""
    assert gc.get_freeze_count() == 0
    if frozen_before:
        gc.freeze()
    try:
        assert cli.main(['simulate', os.path.join(
            ROOT, 'examples', 'rack-anti-affinity.yaml'),
            '--format', 'json']) == 0
        assert gc.isenabled()
        assert (gc.get_freeze_count() > 0) == frozen_before
    finally:
        gc.unfreeze()
    assert json.loads(capsys.readouterr().out)['stats']['placed'] == 6


def test_the_command_as_a_process_decides_as_in_process(capsys):
    """``simulate`` as its own process (the console script's path: what
    it made stays frozen to the exit, no green resolver for eventlet)
    reports what it reports in-process."""
    path = os.path.join(ROOT, 'examples', 'rack-anti-affinity.yaml')
    assert cli.main(['simulate', path, '--format', 'json']) == 0
    here = json.loads(capsys.readouterr().out)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [ROOT, os.environ.get('PYTHONPATH')])))
    env.pop('EVENTLET_NO_GREENDNS', None)
    out = subprocess.run(
        [sys.executable, '-m', 'nova_scoped_policies.cmd.main', 'simulate',
         path, '--format', 'json'],
        capture_output=True, text=True, env=env, check=True).stdout
    there = json.loads(out)
    # what the user waited, start of the process to the report: more than
    # the world and the requests (the imports, the scenario file)
    assert there['stats']['process_seconds'] > there['stats']['seconds'] > 0
    for found in (here, there):
        found['stats'].pop('seconds')
        found['stats'].pop('process_seconds')
    assert there == here
