"""Stacks in the simulator: plan, boot_plan and confirm on fake and real
Placement (shared/contracts/simulation.md, ``stacks:``)."""

import collections
import json
import os
import subprocess
import sys

import pytest
import yaml

from nova_scoped_policies.cmd import main as cli
from nova_scoped_policies.placement import holds
from nova_scoped_policies.simulator import runner
from nova_scoped_policies.simulator import scenario as sc
from tests import placement_fixtures as pf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
EXAMPLE = os.path.join(ROOT, 'examples', 'stack-joint-vs-greedy.yaml')


def run(data, placement=pf.FakePlacementFixture):
    """The report; with the fake Placement also ``holds_left``: hold
    consumers still holding capacity at the end."""
    fixture = placement()
    fixture.setUp()
    try:
        scenario = sc.parse(data) if isinstance(data, dict) else \
            sc.load(data)
        result = runner.Simulation(scenario, pf.client_for(fixture)).run()
        if isinstance(fixture, pf.FakePlacementFixture):
            result['holds_left'] = sum(
                1 for c in fixture.app.model.consumers.values()
                if c.type == holds.CONSUMER_TYPE)
        return result
    finally:
        fixture.cleanUp()


def world(racks, extra=None):
    data = {'scopes': {'rack': {}}, 'aggregates': [], 'hosts': []}
    for r, count in enumerate(racks, 1):
        names = [f'r{r}-h{i}' for i in range(1, count + 1)]
        data['aggregates'].append({'name': f'rack-{r}', 'scope': 'rack',
                                   'hosts': names})
        data['hosts'] += [{'name': n, 'resources': {'VCPU': 8,
                                                    'MEMORY_MB': 8192}}
                          for n in names]
    data.update(extra or {})
    return data


def leaf(name, count, vcpu, policies=()):
    return {'name': name, 'policies': list(policies),
            'servers': {'count': count, 'flavor': {
                'resources': {'VCPU': vcpu, 'MEMORY_MB': 512}}}}


@pytest.mark.parametrize('placement', [pf.FakePlacementFixture,
                                       pf.real_placement],
                         ids=['fake', 'real'])
def test_one_at_a_time_fails_where_the_joint_decision_fits(placement):
    result = run(EXAMPLE, placement)
    failed = {f['server'] for f in result['failures']}
    assert failed == {f'big-{i}' for i in range(1, 7)}
    plan = result['plans']['app']
    assert plan['status'] == 'reserved' and plan['reason'] == ''
    assert plan['confirmed']
    placed = {p['server']: p for p in result['placements']}
    stack_servers = [f's-{i}' for i in range(1, 5)] + [
        f'b-{i}' for i in range(1, 7)]
    for server in stack_servers:   # booted where it was decided
        assert placed[server]['host'] == plan['assignments'][server]
    assert len({placed[f'b-{i}']['domains']['rack']
                for i in range(1, 7)}) == 1
    assert len({placed[s]['host'] for s in stack_servers if
                s.startswith('b')}) == 6
    assert result.get('holds_left', 0) == 0


def test_holds_keep_the_capacity_until_the_servers_boot():
    data = world([2, 2], {
        'stacks': [{'name': 'app', 'project': 'tenant-a',
                    'group': leaf('web', 4, 8, ['anti-affinity:host'])}],
        'requests': [
            {'plan': {'stack': 'app'}},
            # everything is held: a plain boot finds no room
            {'boot': {'name': 'intruder', 'flavor': {
                'resources': {'VCPU': 1, 'MEMORY_MB': 1}}}},
            {'boot_plan': {'stack': 'app'}},
            {'confirm': {'stack': 'app'}}]})
    result = run(data)
    assert [f['server'] for f in result['failures']] == ['intruder-1']
    assert sorted(p['server'] for p in result['placements']) == [
        'web-1', 'web-2', 'web-3', 'web-4']
    assert result['plans']['app']['confirmed']
    assert result['holds_left'] == 0


def test_confirm_releases_what_was_not_booted():
    data = world([2], {
        'stacks': [{'name': 'app', 'group': leaf('web', 2, 8)}],
        'requests': [
            {'plan': {'stack': 'app'}},
            {'confirm': {'stack': 'app'}},
            # the capacity is free again
            {'boot': {'name': 'later', 'count': 2, 'flavor': {
                'resources': {'VCPU': 8, 'MEMORY_MB': 512}}}}]})
    result = run(data)
    assert not result['failures']
    assert sorted(p['server'] for p in result['placements']) == [
        'later-1', 'later-2']


def test_an_infeasible_plan_says_why_and_boots_nothing():
    data = world([2, 2], {
        'stacks': [{'name': 'app', 'group': {
            'name': 'root', 'policies': ['anti-affinity:rack'],
            'members': [leaf('a', 1, 1), leaf('b', 1, 1), leaf('c', 1, 1)]}}],
        'requests': [{'plan': {'stack': 'app'}},
                     {'boot_plan': {'stack': 'app'}}]})
    result = run(data)
    plan = result['plans']['app']
    assert plan == {'status': 'infeasible', 'assignments': {},
                    'confirmed': False, 'optimal': False, 'stopped': '',
                    'reason': 'stack.group: anti-affinity:rack cannot be '
                              'met with the capacity left',
                    'seconds': plan['seconds']}
    assert {f['server'] for f in result['failures']} == {'a-1', 'b-1',
                                                         'c-1'}
    assert all(f['reason'] == 'no reserved plan for stack app'
               for f in result['failures'])


def test_relationships_to_scenario_groups_and_servers_by_name():
    data = world([2, 2], {
        'groups': [{'name': 'db', 'policies': ['anti-affinity:host']}],
        'stacks': [{'name': 'app', 'group': leaf('web', 2, 1),
                    'relationships': [
            {'from': 'web', 'to': {'server_group': 'db'},
             'policies': ['anti-affinity:rack']},
            {'from': 'web', 'to': {'server': 'other-1'},
             'policies': ['anti-affinity:host']}]}],
        'requests': [
            {'boot': {'name': 'db', 'group': 'db', 'flavor': {
                'resources': {'VCPU': 1, 'MEMORY_MB': 1}}}},
            {'boot': {'name': 'other', 'flavor': {
                'resources': {'VCPU': 1, 'MEMORY_MB': 1}}}},
            {'plan': {'stack': 'app'}}, {'boot_plan': {'stack': 'app'}}]})
    result = run(data)
    placed = {p['server']: p for p in result['placements']}
    db_rack = placed['db-1']['domains']['rack']
    assert all(placed[f'web-{i}']['domains']['rack'] != db_rack and
               placed[f'web-{i}']['host'] != placed['other-1']['host']
               for i in (1, 2))


@pytest.mark.parametrize('change, key', [
    (lambda d: d['stacks'][0]['group']['servers'].update(count=0),
     'stacks[0].group.servers.count'),
    (lambda d: d['stacks'][0]['group'].update(policies=['anti-affinity:rak']),
     'stacks[0].group.policies[0]'),
    (lambda d: d['requests'].append({'plan': {'stack': 'nope'}}),
     'requests[0].plan.stack'),
    (lambda d: d['scopes'].update(row={'parent': 'nothere'}),
     'scopes.row.parent'),
    (lambda d: d['scopes'].update(rack={'parent': 'row'}, row={}) or
     d['aggregates'].append({'name': 'row-1', 'scope': 'row',
                             'hosts': ['r1-h1']}),
     'stacks[0]: scope rack'),
])
def test_malformed_stacks_exit_2_naming_the_key(tmp_path, capsys,
                                                change, key):
    data = world([2], {'stacks': [{'name': 'app',
                                   'group': leaf('web', 1, 1,
                                                 ['anti-affinity:rack'])}],
                       'requests': []})
    change(data)
    path = tmp_path / 'bad.yaml'
    path.write_text(yaml.safe_dump(data))
    assert cli.main(['simulate', str(path)]) == 2
    assert key in capsys.readouterr().err


def test_json_report_has_the_plans(capsys):
    assert cli.main(['simulate', EXAMPLE, '--format', 'json']) == 0
    out = json.loads(capsys.readouterr().out)
    plan = out['plans']['app']
    assert set(plan) == {'status', 'assignments', 'reason', 'seconds',
                         'confirmed', 'optimal', 'stopped'}
    # no soft policy: the first decision that meets every hard one
    assert plan['optimal'] and plan['stopped'] == 'nothing to improve'
    assert collections.Counter(plan['assignments'].values()).most_common(1)[
        0][1] == 1


def test_plot_shows_the_decision(tmp_path, capsys):
    path = tmp_path / 'stack.png'
    assert cli.main(['simulate', EXAMPLE, '--plot', str(path)]) == 0
    assert path.stat().st_size > 10000
    assert 'Stack app: reserved, confirmed' in capsys.readouterr().out


def _soft_app(groups=6):
    """Groups of four (six), soft policies within and across them and a
    soft relationship: CP-SAT searches from the first decision."""
    members = [leaf(f'g{g}', 4, 1 + g % 3,
                    ['soft-anti-affinity:host', 'soft-affinity:rack'])
               for g in range(groups)]
    return {'name': 'app', 'group': {
        'name': 'root', 'policies': ['soft-anti-affinity:rack'],
        'members': members},
        'relationships': [{'from': 'g0', 'to': 'g3',
                           'policies': ['soft-affinity:rack']}]}


def _tight_app():
    """Five clusters of four, each over at least three racks
    (LLMN n=3), never sharing one, on twelve racks: one at a time finds
    nothing, and no decision exists (15 racks needed), which takes the
    search a while to prove."""
    return {'name': 'tight', 'group': {
        'name': 'root', 'policies': ['anti-affinity:rack'],
        'members': [{'name': f'c{g}', 'llmn': {
            'level1': 'rack', 'level2': 'host', 'n': 3},
            'servers': {'count': 4, 'flavor': {'resources': {
                'VCPU': 1, 'MEMORY_MB': 512}}}} for g in range(5)]}}


def _timeless(result):
    result['stats'].pop('seconds')
    result['stats'].pop('process_seconds', None)
    for plan in result.get('plans', {}).values():
        plan.pop('seconds')
    for entry in result.get('resilience', ()):
        entry.pop('seconds')
    result.pop('holds_left', None)
    return result


def test_a_plan_cut_short_by_its_work_limit_says_so_alike_each_time(
        monkeypatch):
    """The simulator's limit is the solver's deterministic work: a limit
    too small to finish the search gives the same answer every run, a
    decision ``optimal: false`` (stopped at the limit) or, with none
    found, ``not found in time``, never ``infeasible``."""
    from nova_scoped_policies.simulator import plans as plans_mod
    monkeypatch.setattr(plans_mod, 'TIME_LIMIT', 0.01)
    data = world([4, 4, 4, 4], {
        'stacks': [_soft_app()], 'requests': [{'plan': {'stack': 'app'}}]})
    first = _timeless(run(data))
    assert _timeless(run(data)) == first
    plan = first['plans']['app']
    assert plan['status'] == 'reserved' and len(plan['assignments']) == 24
    assert (plan['optimal'], plan['stopped']) == (False, 'limit')
    data = world([3] * 12, {
        'stacks': [_tight_app()], 'requests': [{'plan': {'stack': 'tight'}}]})
    plan = run(data)['plans']['tight']
    assert plan['status'] == 'not found in time'
    assert plan['reason'] == ('not found within the limit: may still fit '
                              '(0.01 s of solver work)')
    assert (plan['optimal'], plan['stopped']) == (False, 'limit')


def test_plans_are_alike_in_any_process_and_with_any_workers(tmp_path):
    """The same scenario, planned in processes of different hash seeds
    (set and dict orders differ), swept in this process and on two
    workers: the same JSON, timings aside."""
    data = world([3, 3, 3, 3], {
        'stacks': [_soft_app(groups=4)],
        'requests': [{'plan': {'stack': 'app'}},
                     {'boot_plan': {'stack': 'app'}}]})
    path = tmp_path / 'scenario.yaml'
    path.write_text(yaml.safe_dump(data))
    command = os.path.join(os.path.dirname(sys.executable),
                           'nova-scoped-policies')
    found = []
    for seed, workers in (('1', '0'), ('2', '2')):
        done = subprocess.run(
            [command, 'resilience', str(path), '--fail', 'host',
             '--workers', workers, '--format', 'json'],
            capture_output=True, text=True, timeout=600,
            env=dict(os.environ, PYTHONHASHSEED=seed))
        assert done.returncode == 0, done.stderr
        found.append(_timeless(json.loads(done.stdout)))
    assert found[0] == found[1]
    plan = found[0]['plans']['app']
    assert plan['status'] == 'reserved' and plan['optimal']
    assert found[0]['resilience'][0]['cases'] == 12
