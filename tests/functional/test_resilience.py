"""Servers already running and resilience sweeps
(shared/contracts/simulation.md: "Servers already running", "Resilience:
what if a domain fails").

The sweeps run on real worker processes: a Dask ``LocalCluster`` of two
(the command's ``--workers 2``), and a ``dask scheduler`` with a ``dask
worker`` started as processes of their own; their reports must be the
one the sweep gives in the process, whatever the workers, even when a
worker dies mid-sweep. The remote workers' own task records show that
they ran the cases, and a scheduler with no worker is an error, never a
sweep run in the command's process instead.
"""

import json
import os
import socket
import subprocess
import sys

import pytest
import yaml

from nova_scoped_policies.cmd import main as cli
from nova_scoped_policies.simulator import sweep_worker

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
BIN = os.path.dirname(sys.executable)
FLAVOR = {'resources': {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}}
BIG = {'resources': {'VCPU': 8, 'MEMORY_MB': 2048, 'DISK_GB': 20}}


def world(servers=(), requests=(), groups=(), racks=4, per_rack=3,
          stacks=()):
    """``racks`` racks of ``per_rack`` hosts (h1, h2, ... in rack order),
    8 VCPUs each."""
    hosts = [f'h{i}' for i in range(1, racks * per_rack + 1)]
    return {
        'scopes': {'rack': {}},
        'aggregates': [{'name': f'rack-{r + 1}', 'scope': 'rack',
                        'hosts': hosts[r * per_rack:(r + 1) * per_rack]}
                       for r in range(racks)],
        'hosts': [{'name': h, 'resources': {'VCPU': 8, 'MEMORY_MB': 16384,
                                            'DISK_GB': 200}}
                  for h in hosts],
        'groups': list(groups), 'servers': list(servers),
        'stacks': list(stacks), 'requests': list(requests)}


def running(name, host, group=None, flavor=FLAVOR, project=None):
    found = {'name': name, 'host': host, 'flavor': flavor}
    if group:
        found['group'] = group
    if project:
        found['project'] = project
    return found


def run(tmp_path, data, *args, command='simulate', check=True):
    """The command in a process of its own, as an operator runs it:
    (exit status, stdout, stderr)."""
    path = tmp_path / 'scenario.yaml'
    path.write_text(yaml.safe_dump(data))
    done = subprocess.run(
        [os.path.join(BIN, 'nova-scoped-policies'), command, str(path),
         *args], capture_output=True, text=True, timeout=600,
        env=dict(os.environ, **ENV))
    if check:
        assert done.returncode == 0, done.stderr
    return done.returncode, done.stdout, done.stderr


ENV = {}


def report(tmp_path, data, *args, command='simulate'):
    return json.loads(run(tmp_path, data, '--format', 'json', *args,
                          command=command)[1])


def timeless(result):
    result['stats'].pop('seconds')
    result['stats'].pop('process_seconds', None)
    for entry in result.get('resilience', ()):
        entry.pop('seconds')
    return result


# -- servers already running ----------------------------------------------

def test_running_servers_take_their_hosts_and_keep_their_violations(
        tmp_path):
    data = world(
        groups=[{'name': 'db', 'policies': ['anti-affinity:rack']}],
        # two members in rack-1 already: the world as it is
        servers=[running('db-a', 'h1', 'db'), running('db-b', 'h2', 'db'),
                 running('load', 'h4', flavor=BIG, project='other')],
        requests=[{'boot': {'name': 'db-c', 'group': 'db',
                            'flavor': FLAVOR}},
                  {'boot': {'name': 'x', 'flavor': BIG}}])
    result = report(tmp_path, data)
    audit = result['audit']['db']
    assert {m['server']: m['host'] for m in audit['members']} == {
        'db-a': 'h1', 'db-b': 'h2',
        'db-c-1': audit['members'][2]['host']}
    assert audit['violations'] and 'rack-1' in audit['violations'][0]
    # the running members count: db-c goes to neither rack-1 nor, as the
    # weighers spread, a full host; h4 is full (load takes its 8 VCPUs)
    placed = {p['server']: p for p in result['placements']}
    assert placed['db-c-1']['domains']['rack'] != 'rack-1'
    assert placed['x-1']['host'] != 'h4'
    # running servers are not placements of the scenario's requests
    assert set(placed) == {'db-c-1', 'x-1'}


def test_reserved_amounts_are_never_allocated(tmp_path):
    data = world(racks=1, per_rack=1, requests=[
        {'boot': {'name': 'a', 'flavor': BIG}}])
    data['hosts'][0]['reserved'] = {'VCPU': 1}
    result = report(tmp_path, data)
    assert result['failures'][0]['server'] == 'a-1'


@pytest.mark.parametrize('server,field', [
    (running('s', 'nosuch'), 'servers[0].host'),
    (running('s', 'h1', flavor={'resources': {'VCPU': 9}}),
     'servers[0].flavor.resources.VCPU'),
    (running('s', 'h1', group='nosuch'), 'servers[0].group'),
    ({'name': 's', 'host': 'h1'}, 'servers[0]'),
])
def test_bad_running_servers_are_refused_naming_the_key(tmp_path, server,
                                                        field):
    status, out, err = run(tmp_path, world(servers=[server]), check=False)
    assert status == 2 and not out
    assert f': {field}' in err and len(err.splitlines()) == 1


def test_servers_that_together_overfill_a_host_are_refused(tmp_path):
    status, _, err = run(tmp_path, world(servers=[
        running('a', 'h1', flavor=BIG), running('b', 'h1')]), check=False)
    assert status == 2
    assert "servers[1].flavor.resources.VCPU: 2: 'b' does not fit h1" in err


# -- resilience -------------------------------------------------------------

def ha_world(**kw):
    """db (anti-affinity:rack) has a member in every rack: losing any
    rack leaves one with no legal host. web (soft-anti-affinity:rack)
    can always move; app (affinity:rack) lives in rack-2."""
    return world(
        groups=[{'name': 'db', 'policies': ['anti-affinity:rack']},
                {'name': 'web', 'policies': ['soft-anti-affinity:rack']},
                {'name': 'app', 'policies': ['affinity:rack']}],
        servers=[running(f'db-{r}', f'h{3 * r - 2}', 'db')
                 for r in range(1, 5)]
        + [running(f'web-{r}', f'h{3 * r - 1}', 'web') for r in range(1, 5)]
        + [running('app-1', 'h4', 'app'), running('app-2', 'h5', 'app')],
        **kw)


def test_n_minus_one_over_racks(tmp_path):
    result = report(tmp_path, ha_world(
        requests=[{'resilience': {'fail': 'rack'}}]))
    (sweep,) = result['resilience']
    assert (sweep['fail'], sweep['count'], sweep['cases'],
            sweep['survived']) == ('rack', 1, 4, 0)
    by_case = {tuple(c['domains']): c for c in sweep['broken']}
    # rack-2 holds app's two members: they have no other rack to go to
    # (affinity), and db's and web's have one each: worst first
    assert sweep['broken'][0]['domains'] == ['rack-2']
    assert sorted(by_case[('rack-2',)]['unplaced']) == [
        'app-1', 'app-2', 'db-2']
    assert by_case[('rack-1',)]['unplaced'] == ['db-1']
    reason = by_case[('rack-1',)]['groups']['db'][0]
    assert reason.startswith('anti-affinity:rack: no legal host for db-1 (')
    # web's evacuated member joins a rack with another web member
    assert by_case[('rack-1',)]['soft'] == {'web': 1}
    assert sweep['groups'] == {'db': {'broken_in': 4, 'of': 4},
                               'app': {'broken_in': 1, 'of': 4}}
    # headroom: 9 hosts up of 8 VCPUs, less the 8 servers on them (2
    # each), less web-1, evacuated there (db-1 found no host)
    assert sweep['headroom']['rack-1']['VCPU'] == 9 * 8 - 2 * 8 - 2
    assert set(sweep['headroom']) == {'rack-1', 'rack-2', 'rack-3',
                                      'rack-4'}


def test_a_sweep_changes_nothing_outside_itself(tmp_path):
    later = [{'boot': {'name': 'late', 'group': 'web', 'flavor': FLAVOR}},
             {'fail_host': {'host': 'h2'}}]
    without = timeless(report(tmp_path, ha_world(requests=later)))
    swept = timeless(report(tmp_path, ha_world(requests=[
        {'resilience': {'fail': 'host', 'count': 2}}] + later)))
    assert swept.pop('resilience')[0]['cases'] == 66
    swept['stats']['requests'] -= 1
    assert swept == without


def test_each_case_is_its_world_with_its_domains_failed(tmp_path):
    """A case of the sweep says what failing its hosts in a world of its
    own says (``fail_host`` of each, the servers evacuated in name
    order)."""
    (sweep,) = report(tmp_path, ha_world(
        requests=[{'resilience': {'fail': 'rack'}}]))['resilience']
    case = next(c for c in sweep['broken'] if c['domains'] == ['rack-3'])
    alone = report(tmp_path, ha_world(requests=[
        {'fail_host': {'host': h}} for h in ('h7', 'h8', 'h9')]))
    assert [f['server'] for f in alone['failures']] == case['unplaced']


def test_groups_judges_only_those_groups(tmp_path):
    (sweep,) = report(tmp_path, ha_world(requests=[
        {'resilience': {'fail': 'rack', 'groups': ['web']}}]))['resilience']
    assert (sweep['cases'], sweep['survived'], sweep['broken']) == (
        4, 4, [])
    assert sweep['only'] == ['web']


def test_n_minus_k_sampled_with_a_seed(tmp_path):
    request = {'resilience': {'fail': 'host', 'count': 3, 'cases': 7,
                              'seed': 11}}
    first, second = (report(tmp_path, ha_world(requests=[request]),
                            '--workers', '0')['resilience'][0]
                     for _ in range(2))
    assert first['cases'] == 7 and first['headroom'] == {}
    first.pop('seconds'), second.pop('seconds')
    assert first == second


@pytest.mark.parametrize('args,field', [
    (['--fail', 'nosuch'], '--fail'),
    (['--fail', 'rack', '--count', '5'], '--count'),
    (['--fail', 'rack', '--group', 'nosuch'], '--group'),
    (['--fail', 'rack', '--cases', '0'], '--cases'),
])
def test_bad_sweeps_exit_2_naming_the_option(tmp_path, args, field):
    status, out, err = run(tmp_path, ha_world(), *args,
                           command='resilience', check=False)
    assert status == 2 and not out
    assert f': {field}: ' in err and len(err.splitlines()) == 1


def test_bad_resilience_requests_name_the_key(tmp_path):
    status, _, err = run(tmp_path, ha_world(requests=[
        {'resilience': {'fail': 'rack', 'count': 9}}]), check=False)
    assert status == 2
    assert 'requests[0].resilience.count: 9: more than the 4 domains' in err


def test_the_command_table_reads_at_a_glance(tmp_path):
    _, out, _ = run(tmp_path, ha_world(), '--fail', 'rack', '--workers',
                    '0', command='resilience')
    lines = out.splitlines()
    assert lines[0] == ('Resilience: rack domains fail one at a time: 0 of '
                        '4 cases survive' + lines[0][lines[0].index(' ('):])
    assert 'Cases that break, worst first' in lines
    assert any(line.startswith('  rack-2  3 ') for line in lines)
    assert 'Groups at risk' in lines
    assert any('least first' in line for line in lines)


@pytest.mark.parametrize('count,kind', [(1, 'heatmap'), (2, 'bars')])
def test_plot(tmp_path, count, kind, monkeypatch):
    path = tmp_path / 'scenario.yaml'
    path.write_text(yaml.safe_dump(ha_world()))
    drawn = []
    from nova_scoped_policies.simulator import plot
    real = plot.resilience
    monkeypatch.setattr(plot, 'resilience',
                        lambda *a: drawn.append(real(*a)) or drawn[-1])
    png = tmp_path / 'sweep.png'
    assert cli.main(['resilience', str(path), '--fail', 'rack', '--count',
                     str(count), '--workers', '0', '--plot',
                     str(png)]) == 0
    assert png.read_bytes().startswith(b'\x89PNG')
    assert drawn[0].kind == kind and drawn[0].groups[0] == 'db'
    if count == 1:  # every rack, those that survive too
        assert drawn[0].cases == ['rack-1', 'rack-2', 'rack-3', 'rack-4']


def test_the_nova_engine_sweeps_alike(tmp_path):
    data = ha_world(requests=[{'resilience': {'fail': 'rack'}}])
    assert timeless(report(tmp_path, data)) == timeless(
        report(tmp_path, data, '--engine', 'nova'))


# -- on worker processes -----------------------------------------------------

def sweep_of(tmp_path, *args):
    """A 12-case N-1 sweep over hosts, its report."""
    return timeless(report(tmp_path, ha_world(), '--fail', 'host', *args,
                           command='resilience'))


@pytest.fixture(scope='module')
def here(tmp_path_factory):
    return sweep_of(tmp_path_factory.mktemp('here'), '--workers', '0')


def test_a_local_cluster_of_two_workers_answers_the_same(tmp_path, here):
    assert here['resilience'][0]['cases'] == 12
    assert sweep_of(tmp_path, '--workers', '2') == here


def test_a_worker_dying_mid_sweep_costs_a_retry_not_the_answer(
        tmp_path, here, monkeypatch):
    marker = tmp_path / 'died'
    monkeypatch.setitem(ENV, sweep_worker.CRASH_ONCE, str(marker))
    assert sweep_of(tmp_path, '--workers', '2') == here
    # a worker process did die (it wrote its pid, then exited)
    assert marker.read_text().isdigit()


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture
def dask_cluster(tmp_path):
    """``dask scheduler`` and one ``dask worker`` (two processes of one
    thread), as an operator starts them on other machines."""
    port = _free_port()
    address = f'tcp://127.0.0.1:{port}'
    logs = open(tmp_path / 'dask.log', 'w')
    started = [subprocess.Popen(
        [os.path.join(BIN, 'dask'), 'scheduler', '--host', '127.0.0.1',
         '--port', str(port), '--no-dashboard'],
        stdout=logs, stderr=subprocess.STDOUT)]
    try:
        started.append(subprocess.Popen(
            [os.path.join(BIN, 'dask'), 'worker', address, '--nworkers',
             '2', '--nthreads', '1', '--no-dashboard', '--memory-limit',
             '0'], stdout=logs, stderr=subprocess.STDOUT, cwd=ROOT))
        # asked in a process of its own: this one may be patched by
        # eventlet (nova's test harness), where Dask's client cannot run
        subprocess.run([sys.executable, '-c', (
            'import distributed, sys\n'
            'with distributed.Client(sys.argv[1], timeout=60) as client:\n'
            '    client.wait_for_workers(2, timeout=120)\n'), address],
            check=True, timeout=240, capture_output=True)
        yield address
    finally:
        for process in reversed(started):
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        logs.close()


RAN = """
import distributed, json, sys


def ran(dask_worker):
    # the worker's own transition log: the tasks it ran to the end
    return [entry[0] for entry in dask_worker.state.log
            if len(entry) > 2 and entry[1:3] == ('executing', 'memory')
            and str(entry[0]).startswith('cases-')]


with distributed.Client(sys.argv[1], timeout=60) as client:
    print(json.dumps({address: {'pid': found[0], 'tasks': found[1]}
                      for address, found in client.run(
                          lambda dask_worker: (__import__('os').getpid(),
                                               ran(dask_worker))).items()}))
"""
"""Prints, for each worker of a Dask scheduler, its process id and the
sweep tasks (:func:`.sweep_worker.cases`) its own records show it ran:
asked in a process of its own (this one may be patched by eventlet)."""


def ran_on(address):
    done = subprocess.run([sys.executable, '-c', RAN, address],
                          capture_output=True, text=True, timeout=240,
                          check=True)
    return json.loads(done.stdout)


def test_a_running_dask_cluster_answers_the_same(tmp_path, here,
                                                 dask_cluster):
    before = ran_on(dask_cluster)
    assert len(before) == 2, before  # its two workers, no task run yet
    assert not any(w['tasks'] for w in before.values()), before
    assert sweep_of(tmp_path, '--scheduler', dask_cluster) == here
    # the remote workers ran the cases: their own task records hold the
    # sweep's 12 one-case tasks (12 cases, 2 workers: tasks of one case),
    # and they are not this process nor the command's
    workers = ran_on(dask_cluster)
    tasks = [t for w in workers.values() for t in w['tasks']]
    assert len(set(tasks)) == 12, workers
    assert os.getpid() not in {w['pid'] for w in workers.values()}


@pytest.fixture
def workerless(tmp_path):
    """A ``dask scheduler`` that no worker joins."""
    port = _free_port()
    with open(tmp_path / 'dask.log', 'w') as logs:
        process = subprocess.Popen(
            [os.path.join(BIN, 'dask'), 'scheduler', '--host', '127.0.0.1',
             '--port', str(port), '--no-dashboard'],
            stdout=logs, stderr=subprocess.STDOUT)
        try:
            yield f'tcp://127.0.0.1:{port}'
        finally:
            process.terminate()
            process.wait(30)


def test_a_scheduler_without_workers_exits_2_and_runs_nothing_here(
        tmp_path, workerless):
    """No fallback: with no worker to run them, the cases are not run in
    the command's own process; the command says why, with no report."""
    status, out, err = run(tmp_path, ha_world(), '--fail', 'host',
                           '--scheduler', workerless, '--format', 'json',
                           command='resilience', check=False)
    assert status == 2 and not out, (status, out, err)
    assert err.startswith(f'error: --scheduler {workerless}: no Dask '
                          'worker joined it within 20 s'), err
    assert len(err.splitlines()) == 1, err


def test_a_scheduler_that_does_not_answer_exits_2(tmp_path):
    address = f'tcp://127.0.0.1:{_free_port()}'
    status, out, err = run(tmp_path, ha_world(), '--fail', 'rack',
                           '--scheduler', address, command='resilience',
                           check=False)
    assert status == 2 and not out
    assert err.startswith(f'error: --scheduler {address}: no Dask '
                          'scheduler answers')
    assert len(err.splitlines()) == 1


def test_a_violation_the_world_had_is_not_the_cases_fault(tmp_path):
    """db's three members share rack-1 (a violation the world has): a
    host of rack-1 failing moves one member out, which makes the
    violation smaller, not new; every case survives."""
    data = world(groups=[{'name': 'db', 'policies': ['anti-affinity:rack']}],
                 servers=[running(f'db-{i}', f'h{i}', 'db')
                          for i in (1, 2, 3)],
                 requests=[{'resilience': {'fail': 'host'}}])
    result = report(tmp_path, data, '--workers', '0')
    (sweep,) = result['resilience']
    assert (sweep['cases'], sweep['survived']) == (12, 12)
    assert result['audit']['db']['violations']
