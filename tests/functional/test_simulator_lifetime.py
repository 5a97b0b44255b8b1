"""Servers' lifetime in the simulator: moves, host failures, repairs
(shared/contracts/simulation.md, "Servers' lifetime").

Every scenario runs through both engines on the embedded Placement (the
default fast one and ``--engine nova``): their reports must be the same,
and say what the real scheduler's filters decided.
"""

import copy
import json
import os

import pytest

from nova_scoped_policies.cmd import main as cli
from nova_scoped_policies.placement import fake
from nova_scoped_policies.placement import holds
from nova_scoped_policies.simulator import embedded
from nova_scoped_policies.simulator import fast
from nova_scoped_policies.simulator import report
from nova_scoped_policies.simulator import runner
from nova_scoped_policies.simulator import scenario as sc
from tests import placement_fixtures as pf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
EXAMPLE = os.path.join(ROOT, 'examples', 'lifetime.yaml')
FLAVOR = {'resources': {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}}
RACKS = {'rack-1': ('h1', 'h2'), 'rack-2': ('h3', 'h4'),
         'rack-3': ('h5', 'h6')}
RACK_OF = {h: rack for rack, hosts in RACKS.items() for h in hosts}


def world(requests, groups=(), stacks=(), racks=RACKS):
    """Three racks of two hosts (by default) and the requests."""
    return {
        'scopes': {'rack': {}},
        'aggregates': [{'name': name, 'scope': 'rack', 'hosts': list(hosts)}
                       for name, hosts in racks.items()],
        'hosts': [{'name': h, 'resources': {'VCPU': 8, 'MEMORY_MB': 8192,
                                            'DISK_GB': 100}}
                  for hosts in racks.values() for h in hosts],
        'groups': list(groups), 'stacks': list(stacks),
        'requests': list(requests)}


def boot(name, group=None, count=1):
    found = {'name': name, 'count': count, 'flavor': FLAVOR}
    if group:
        found['group'] = group
    return {'boot': found}


def _timeless(result):
    result['stats'].pop('seconds')
    for entry in list(result.get('plans', {}).values()) + \
            result.get('repairs', []):
        entry.pop('seconds')
    return result


def run(data, engine):
    scenario = sc.parse(copy.deepcopy(data))
    if engine == 'fast':
        return _timeless(fast.FastSimulation(
            scenario, fake.FakePlacement()).run())
    placement = embedded.EmbeddedPlacement()
    try:
        return _timeless(runner.Simulation(scenario,
                                           placement.start()).run())
    finally:
        placement.stop()


def both(data):
    """The report of the nova engine, once the fast one agreed."""
    nova = run(data, 'nova')
    assert run(data, 'fast') == nova
    return nova


def hosts(result):
    """Where every server runs at the end."""
    where = {p['server']: p['host'] for p in result['placements']}
    for move in result.get('moves', ()):
        where[move['server']] = move['to']
    return where


# -- migrate ------------------------------------------------------------------

def test_migrate_lets_the_scheduler_pick_another_host():
    result = both(world([boot('db', 'db', 2), {'migrate': {'server': 'db-1'}}],
                        [{'name': 'db', 'policies': ['anti-affinity:rack']}]))
    (move,) = result['moves']
    placed = {p['server']: p['host'] for p in result['placements']}
    assert move['server'] == 'db-1' and move['why'] == 'migrate'
    assert move['from'] == placed['db-1'] != move['to']
    assert RACK_OF[move['to']] != RACK_OF[placed['db-2']]
    assert result['audit']['db']['violations'] == []
    assert not result['failures']


def test_migrate_to_a_host_the_policy_forbids_fails_and_stays():
    data = world([boot('db', 'db', 2)],
                 [{'name': 'db', 'policies': ['anti-affinity:rack']}])
    placed = {p['server']: p['host'] for p in both(data)['placements']}
    # the other host of db-2's rack
    forbidden = next(h for h in RACKS[RACK_OF[placed['db-2']]]
                     if h != placed['db-2'])
    data['requests'].append({'migrate': {'server': 'db-1',
                                         'host': forbidden}})
    result = both(data)
    assert result['moves'] == []
    (failure,) = result['failures']
    assert failure['server'] == 'db-1' and failure['why'] == 'migrate'
    assert failure['reason'] == 'No valid host'
    assert any(r.startswith('anti-affinity:rack')
               for r in failure['rejections'][forbidden])
    assert failure['rejections'][placed['db-2']] == [
        'not the requested host']
    assert hosts(result)['db-1'] == placed['db-1']
    members = {m['server']: m['host']
               for m in result['audit']['db']['members']}
    assert members['db-1'] == placed['db-1']


def test_migrate_to_a_named_legal_host_moves_there():
    data = world([boot('db', 'db', 2)],
                 [{'name': 'db', 'policies': ['anti-affinity:rack']}])
    placed = {p['server']: p['host'] for p in both(data)['placements']}
    free = next(r for r in RACKS if r not in
                {RACK_OF[h] for h in placed.values()})
    data['requests'].append({'migrate': {'server': 'db-1',
                                         'host': RACKS[free][1]}})
    result = both(data)
    assert result['moves'] == [{'server': 'db-1', 'from': placed['db-1'],
                                'to': RACKS[free][1], 'why': 'migrate'}]


def test_a_move_updates_placement_and_the_hosts():
    """The allocation moves (claimed on the destination, released on the
    source): a later boot finds the source's room again, and a server
    that fills a host can move to an empty one only."""
    big = {'resources': {'VCPU': 8, 'MEMORY_MB': 8192, 'DISK_GB': 100}}
    data = world([{'boot': {'name': 'big', 'count': 6, 'flavor': big}},
                  {'delete': 'big-6'},
                  {'migrate': {'server': 'big-1'}},
                  {'boot': {'name': 'late', 'flavor': big}}])
    result = both(data)
    placed = {p['server']: p['host'] for p in result['placements']}
    (move,) = result['moves']
    assert move['to'] == placed['big-6']
    assert placed['late-1'] == move['from']
    assert not result['failures']


# -- fail_host ----------------------------------------------------------------

RACKED = [{'name': 'db', 'policies': ['anti-affinity:rack']}]


def test_fail_host_evacuates_its_servers_keeping_the_racks_apart():
    data = world([boot('db', 'db', 3), {'fail_host': {'server': 'db-1'}}],
                 RACKED)
    result = both(data)
    placed = {p['server']: p['host'] for p in result['placements']}
    (move,) = result['moves']
    assert move == {'server': 'db-1', 'from': placed['db-1'],
                    'to': move['to'], 'why': 'evacuate'}
    # the one legal host: the other of its rack
    assert RACK_OF[move['to']] == RACK_OF[placed['db-1']]
    assert result['audit']['db']['violations'] == []


def test_with_no_legal_host_the_server_stays_and_fails():
    data = world([boot('db', 'db', 3), {'fail_host': {'server': 'db-1'}},
                  {'fail_host': {'server': 'db-1'}},
                  boot('x', count=6)], RACKED)
    result = both(data)
    placed = {p['server']: p['host'] for p in result['placements']}
    first, = result['moves']
    down = {placed['db-1'], first['to']}
    (failure,) = result['failures']
    assert failure['server'] == 'db-1' and failure['why'] == 'evacuate'
    for host, reasons in failure['rejections'].items():
        if host in down:
            assert reasons == ['down (fail_host): never a candidate again']
        else:
            assert reasons[0].startswith('anti-affinity:rack')
    # it stays on the host that is down; nothing boots on a host down
    members = {m['server']: m['host']
               for m in result['audit']['db']['members']}
    assert members['db-1'] == first['to']
    assert not down & {placed[f'x-{i}'] for i in range(1, 7)}


def test_fail_host_by_host_evacuates_in_natural_name_order():
    """Ten servers no other host takes (a trait of h1's only): their
    failures come web-1, web-2, ..., web-10."""
    data = world([{'boot': {'name': 'web', 'count': 10, 'flavor': {
        'resources': {'VCPU': 1, 'MEMORY_MB': 64, 'DISK_GB': 1}},
        'image': {'properties': {'trait:CUSTOM_A': 'required'}}}},
        {'fail_host': {'host': 'h1'}}])
    data['hosts'][0].update(traits=['CUSTOM_A'], resources={
        'VCPU': 16, 'MEMORY_MB': 8192, 'DISK_GB': 100})
    result = both(data)
    assert [f['server'] for f in result['failures']] == [
        f'web-{i}' for i in range(1, 11)]
    assert all(f['rejections']['h1'] == [
        'down (fail_host): never a candidate again']
        for f in result['failures'])


def test_moves_on_a_real_placement():
    """POST /allocations moves the allocation as on the fake."""
    data = world([boot('db', 'db', 3), {'fail_host': {'server': 'db-1'}},
                  {'migrate': {'server': 'db-2'}}], RACKED)
    fixture = pf.real_placement()
    fixture.setUp()
    try:
        real = _timeless(runner.Simulation(
            sc.parse(copy.deepcopy(data)), pf.client_for(fixture)).run())
    finally:
        fixture.cleanUp()
    assert real == both(data)
    assert [m['why'] for m in real['moves']] == ['evacuate', 'migrate']


# -- stacks -------------------------------------------------------------------

def leaf(name):
    return {'name': name, 'servers': {'count': 1, 'flavor': {
        'resources': {'VCPU': 2, 'MEMORY_MB': 512}}}}


STACK = {'name': 'app', 'project': 'tenant-a', 'group': {
    'name': 'root', 'policies': ['anti-affinity:rack'],
    'members': [leaf('a'), leaf('b'), leaf('c')]}}


def _stack_run(requests):
    """The nova engine on the fake, with the hold consumers left."""
    fixture = pf.FakePlacementFixture()
    fixture.setUp()
    try:
        data = world(requests, stacks=[STACK])
        result = _timeless(runner.Simulation(
            sc.parse(copy.deepcopy(data)), pf.client_for(fixture)).run())
        left = sum(1 for c in fixture.app.model.consumers.values()
                   if c.type == holds.CONSUMER_TYPE)
    finally:
        fixture.cleanUp()
    assert run(data, 'fast') == result
    return result, left


def test_boot_plan_goes_through_the_scheduler_and_gives_the_holds_back():
    result, left = _stack_run([{'plan': {'stack': 'app'}},
                               {'boot_plan': {'stack': 'app'}}])
    decided = result['plans']['app']['assignments']
    assert {p['server']: p['host'] for p in result['placements']} == decided
    # the scoped_plan request filter released each hold through the
    # store driver, with no confirm
    assert left == 0
    assert result['stacks']['app']['status'] == 'ok'
    assert result['stacks']['app']['servers'] == decided


def test_a_stack_server_moves_only_where_its_policies_allow():
    result, _ = _stack_run([{'plan': {'stack': 'app'}},
                            {'boot_plan': {'stack': 'app'}}])
    decided = result['plans']['app']['assignments']
    # a host in b-1's rack: the stack's anti-affinity:rack forbids it
    forbidden = next(h for h in RACKS[RACK_OF[decided['b-1']]]
                     if h != decided['b-1'])
    result, _ = _stack_run([
        {'plan': {'stack': 'app'}}, {'boot_plan': {'stack': 'app'}},
        {'migrate': {'server': 'a-1', 'host': forbidden}},
        {'migrate': {'server': 'a-1'}}])
    failure, = result['failures']
    assert failure['server'] == 'a-1' and failure['why'] == 'migrate'
    assert any('anti-affinity:rack' in r
               for r in failure['rejections'][forbidden])
    move, = result['moves']
    # the scheduler picked the one legal host: the other of its rack
    assert move['from'] == decided['a-1']
    assert RACK_OF[move['to']] == RACK_OF[decided['a-1']]
    assert result['stacks']['app']['status'] == 'ok'


def test_a_stack_plan_with_no_room_left_says_why():
    full = {'resources': {'VCPU': 8, 'MEMORY_MB': 8192, 'DISK_GB': 100}}
    result, left = _stack_run([{'boot': {'name': 'fill', 'count': 4,
                                         'flavor': full}},
                               {'plan': {'stack': 'app'}}])
    plan = result['plans']['app']
    assert plan['status'] == 'infeasible' and plan['reason']
    assert left == 0


# -- repair -------------------------------------------------------------------

def test_repair_ends_a_violation_with_the_planners_moves():
    data = world([boot('db', 'db', 2),
                  {'update_group': {'group': 'db',
                                    'policies': ['anti-affinity:rack']}},
                  {'repair': {'group': 'db'}}, {'repair': {}}],
                 [{'name': 'db', 'policies': ['affinity:rack']}])
    result = both(data)
    repaired, again = result['repairs']
    assert repaired['target'] == 'group db'
    assert repaired['status'] == 'repaired' and repaired['reason'] == ''
    assert len(repaired['moves']) == 1
    assert [dict(m, why='repair') for m in repaired['moves']] == \
        result['moves']
    assert again == {'target': 'all', 'status': 'nothing to do',
                     'moves': [], 'reason': ''}
    assert result['audit']['db']['violations'] == []


def test_an_impossible_repair_moves_nothing_and_says_why():
    racks = {'rack-1': ('h1',), 'rack-2': ('h2',)}
    data = world([boot('db', 'db', 3),
                  {'update_group': {'group': 'db',
                                    'policies': ['anti-affinity:rack']}},
                  {'repair': {'group': 'db'}}],
                 [{'name': 'db', 'policies': ['affinity:rack']}], racks=racks)
    result = both(data)
    (repair,) = result['repairs']
    assert repair['status'] == 'impossible' and repair['moves'] == []
    assert repair['reason'].startswith('group db: ')
    assert 'anti-affinity:rack' in repair['reason']
    assert result['moves'] == []
    assert result['audit']['db']['violations']


def test_repair_of_a_stack_moves_its_server_away_again():
    """A stack keeps web apart from group db's racks; db-1 has no policy
    of its own, so a move of it is not checked against the stack and
    breaks the relationship; the stack's repair moves web-1 away."""
    stack = {'name': 'app', 'project': 'tenant-a', 'group': leaf('web'),
             'relationships': [{'from': 'web',
                                'to': {'server_group': 'db'},
                                'policies': ['anti-affinity:rack']}]}
    data = world([boot('db', 'db'), {'plan': {'stack': 'app'}},
                  {'boot_plan': {'stack': 'app'}}],
                 [{'name': 'db', 'project': 'tenant-a'}], [stack])
    placed = {p['server']: p['host'] for p in both(data)['placements']}
    beside = next(h for h in RACKS[RACK_OF[placed['web-1']]]
                  if h != placed['web-1'])
    data['requests'].append({'migrate': {'server': 'db-1',
                                         'host': beside}})
    assert both(data)['stacks']['app']['status'] == 'violated'
    data['requests'].append({'repair': {'stack': 'app'}})
    result = both(data)
    (repair,) = result['repairs']
    assert repair['target'] == 'stack app'
    assert repair['status'] == 'repaired'
    (step,) = repair['moves']
    assert step['server'] == 'web-1'
    assert RACK_OF[step['to']] != RACK_OF[beside]
    assert result['stacks']['app']['status'] == 'ok'


def full_cloud():
    """Issue 37's full cloud: hA takes g's two servers and nothing else
    (2048 MB), hB is full of another project's soft-affinity servers k
    (its memory), hC has room for one server of k but not for one of g
    (1 VCPU). Each boot has one host that fits it best: k's go to hB (the
    most free RAM and VCPU, then k's soft affinity), g's to hA (the only
    host left with the memory)."""
    def host(name, vcpu, ram):
        return {'name': name, 'resources': {'VCPU': vcpu, 'MEMORY_MB': ram,
                                            'DISK_GB': 100}}

    def boot_of(name, group, project, vcpu, ram, count=1):
        return {'boot': {'name': name, 'group': group, 'project': project,
                         'count': count, 'flavor': {'resources': {
                             'VCPU': vcpu, 'MEMORY_MB': ram,
                             'DISK_GB': 1}}}}
    return {
        'scopes': {}, 'aggregates': [],
        'hosts': [host('hA', 4, 2048), host('hB', 4, 8192),
                  host('hC', 1, 4096)],
        'groups': [{'name': 'g', 'project': 'tenant-a',
                    'policies': ['soft-anti-affinity:host']},
                   {'name': 'k', 'project': 'tenant-b',
                    'policies': ['soft-affinity:host']}],
        'stacks': [],
        'requests': [
            boot_of('k', 'k', 'tenant-b', 1, 4096),
            boot_of('kk', 'k', 'tenant-b', 1, 4096),
            boot_of('g', 'g', 'tenant-a', 2, 1024, count=2),
            # the tenant tightens g: its two servers share hA
            {'update_group': {'group': 'g',
                              'policies': ['anti-affinity:host']}},
            {'repair': {'group': 'g'}}, {'repair': {}}]}


def test_repair_moves_another_server_to_make_room():
    """Issue 37: g must split onto hB, full of k's servers; the 2-move
    repair moves one of k to hC first (k's soft affinity is only a cost),
    then one of g to hB, each through the scheduler."""
    result = both(full_cloud())
    placed = {p['server']: p['host'] for p in result['placements']}
    assert placed == {'k-1': 'hB', 'kk-1': 'hB', 'g-1': 'hA', 'g-2': 'hA'}
    repaired, again = result['repairs']
    assert repaired['status'] == 'repaired', repaired
    assert [(m['server'][0], m['from'], m['to'])
            for m in repaired['moves']] == [('k', 'hB', 'hC'),
                                            ('g', 'hA', 'hB')]
    assert [dict(m, why='repair') for m in repaired['moves']] == \
        result['moves']
    assert result['failures'] == []
    assert again['status'] == 'nothing to do'
    assert result['audit']['g']['violations'] == []


def test_a_server_of_a_hard_group_is_not_moved_to_make_room():
    """The same cloud with k's affinity hard: moving one of k would break
    it, so no repair exists."""
    data = full_cloud()
    data['requests'].insert(3, {'update_group': {
        'group': 'k', 'policies': ['affinity:host']}})
    result = both(data)
    repaired, _ = result['repairs']
    assert repaired['status'] == 'impossible' and repaired['moves'] == []
    assert repaired['reason'].startswith('group g: ')
    assert 'even with other servers moved to make room' in \
        repaired['reason']
    assert result['moves'] == []


# -- reports ------------------------------------------------------------------

def test_the_table_shows_moves_repairs_and_stack_audits():
    data = world([boot('db', 'db', 2),
                  {'update_group': {'group': 'db',
                                    'policies': ['anti-affinity:rack']}},
                  {'repair': {'group': 'db'}},
                  {'migrate': {'server': 'db-1', 'host': 'h1'}},
                  {'plan': {'stack': 'app'}}, {'boot_plan': {'stack': 'app'}}],
                 [{'name': 'db', 'policies': ['affinity:rack']}], [STACK])
    result = run(data, 'fast')
    result['stats']['seconds'] = 0.1
    for entry in list(result['plans'].values()) + result['repairs']:
        entry['seconds'] = 0.01
    table = report.to_table(result)
    assert 'Moves\n  server  from  to  why' in table
    assert 'Repair group db: repaired in 0.01 s\n  server  from  to' in table
    assert 'Stack app audit: ok\n  stack.group (across): ' \
        'anti-affinity:rack: ok' in table
    assert table.endswith(
        ' 1 moved, 1 refused move, 1 of 1 repair done, 0.1 s')


def test_the_example_runs_from_the_command_line(capsys):
    assert cli.main(['simulate', EXAMPLE, '--format', 'json']) == 0
    out = json.loads(capsys.readouterr().out)
    assert {'moves', 'repairs'} <= set(out)
    assert {m['why'] for m in out['moves']} >= {'migrate', 'evacuate'}


def test_without_or_tools_a_plan_ends_with_one_line(tmp_path, capsys,
                                                    monkeypatch):
    path = tmp_path / 'stack.json'
    path.write_text(json.dumps(world([{'plan': {'stack': 'app'}}],
                                     stacks=[STACK])))
    monkeypatch.setitem(__import__('sys').modules,
                        'ortools.sat.python.cp_model', None)
    assert cli.main(['simulate', str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.endswith('requests[0].plan: joint decisions need OR-Tools: '
                        'pip install "nova-scoped-policies[joint]"')


@pytest.mark.parametrize('request_, key', [
    ({'migrate': {'server': 'nope'}}, 'requests[1].migrate.server'),
    ({'fail_host': {'host': 'h9'}}, 'requests[1].fail_host.host'),
    ({'repair': {'stack': 'nope'}}, 'requests[1].repair.stack'),
])
def test_a_bad_request_exits_2_naming_the_key(tmp_path, capsys, request_,
                                              key):
    path = tmp_path / 'bad.json'
    path.write_text(json.dumps(world([boot('db'), request_])))
    assert cli.main(['simulate', str(path)]) == 2
    assert key in capsys.readouterr().err


# -- the report after moves (#38) ---------------------------------------------

def test_the_report_says_where_servers_are_at_the_end(capsys):
    assert cli.main(['simulate', EXAMPLE]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    table = lines[lines.index('Servers at the end') + 1:]
    table = table[:table.index('')]
    rows = {line.split()[0]: line for line in table[2:]}
    # db-3 booted on h5, which failed: it is on h6 now, and says whence
    assert rows['db-3'].split()[1:3] == ['h6', 'rack-3']
    assert rows['db-3'].endswith('h5 -> h6 (evacuate)')
    assert rows['cache-2'].endswith('h8 -> h4 (repair)')
    assert 'Host h5 failed: 1 server evacuated' in lines
    # the refused move names the host that refused, the others once
    refused = lines.index('FAILED to migrate db-2: No valid host')
    assert lines[refused + 1:refused + 3] == [
        '  h6: anti-affinity:rack: rack-3 holds 1 of max 1',
        '  (7 other hosts: not the requested host)']
    assert lines[-1].startswith(
        '8 requests, 7 servers placed, 0 failed boots, 3 moved, 1 refused '
        'move, 1 of 1 repair done, ')


def test_the_json_report_has_final_and_the_counts(capsys):
    assert cli.main(['simulate', EXAMPLE, '--format', 'json']) == 0
    result = json.loads(capsys.readouterr().out)
    assert result['final'] == {
        'db-1': 'h2', 'db-2': 'h3', 'db-3': 'h6', 'web-1': 'h1',
        'web-2': 'h4', 'cache-1': 'h7', 'cache-2': 'h4'}
    # placements keep where each server was booted, as the contract says
    assert {p['server']: p['host'] for p in result['placements']}[
        'db-3'] == 'h5'
    stats = result['stats']
    assert {k: stats[k] for k in ('requests', 'placed', 'failed_boots',
                                  'refused_moves', 'moved', 'repaired')} \
        == {'requests': 8, 'placed': 7, 'failed_boots': 0,
            'refused_moves': 1, 'moved': 3, 'repaired': 1}
    assert result['failed_hosts'] == [
        {'host': 'h5', 'evacuated': ['db-3'], 'stayed': []}]


def test_deleted_servers_are_marked_and_leave_final(tmp_path, capsys):
    path = tmp_path / 'scenario.yaml'
    path.write_text(json.dumps(world([boot('a', count=2), {'delete': 'a-1'}],
                                     racks={'rack-1': ('h1',)})))
    assert cli.main(['simulate', str(path)]) == 0
    out = capsys.readouterr().out
    assert any(line.split()[:3] == ['a-1', '-', '-'] and
               line.endswith('deleted') for line in out.splitlines())
    assert out.splitlines()[-1].startswith(
        '2 requests, 2 servers placed, 0 failed boots, ')
    assert cli.main(['simulate', str(path), '--format', 'json']) == 0
    assert json.loads(capsys.readouterr().out)['final'] == {'a-2': 'h1'}


def test_one_request_is_one_request(tmp_path, capsys):
    path = tmp_path / 'scenario.yaml'
    path.write_text(json.dumps(world([boot('a')])))
    assert cli.main(['simulate', str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(
        '1 request, 1 server placed, 0 failed boots, ')


@pytest.mark.parametrize('text', ['', '# nothing but a comment\n'])
def test_an_empty_scenario_says_so(tmp_path, capsys, text):
    path = tmp_path / 'scenario.yaml'
    path.write_text(text)
    assert cli.main(['simulate', str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f'error: {path}: the scenario is empty: it needs hosts ' \
        '(hosts or generate.hosts), and groups and requests to try on ' \
        'them\n'


def test_a_scenario_that_is_a_list_says_what_it_must_be(tmp_path, capsys):
    path = tmp_path / 'scenario.yaml'
    path.write_text('- {boot: {name: a}}\n')
    assert cli.main(['simulate', str(path)]) == 2
    assert capsys.readouterr().err.startswith(
        f'error: {path}: the scenario must be a mapping of sections '
        '(scopes, aggregates, hosts, ')


@pytest.mark.parametrize('group,field,scope', [
    ({'policies': ['anti-affinity:zone'], 'rules':
      {'max_server_per_zone': 2}}, 'groups[0].policies[0]', 'zone'),
    ({'rules': {'max_server_per_zone': 2},
      'policies': ['anti-affinity:zone']}, 'groups[0].policies[0]', 'zone'),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_zone': 2}},
     'groups[0].rules.max_server_per_zone', 'zone'),
])
def test_an_undefined_scope_is_named(tmp_path, capsys, group, field, scope):
    data = world([], groups=[dict(group, name='db')])
    path = tmp_path / 'scenario.yaml'
    path.write_text(json.dumps(data))
    assert cli.main(['simulate', str(path)]) == 2
    err = capsys.readouterr().err
    assert f': {field}: ' in err and f"scope '{scope}'" in err, err
