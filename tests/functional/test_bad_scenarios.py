"""Every bad scenario gets one line and exit 2 (issue 48, item 4).

Property-based: every example and a scenario holding every key of the
contract (shared/contracts/simulation.md, :data:`CONTRACT`) are mutated
(a value of the wrong type, a junk key, huge and empty values, a key or
item removed) and run through ``nova-scoped-policies simulate`` as the
console script runs it (:func:`cli.main`, its output captured; a few
runs as whole processes too). Each run exits 0 or 2 without a
traceback; on exit 2 it prints one line naming the key: a key of the
document it read (or a required one it lacks), and for a value of the
wrong type the key that holds it, which the schema types down to the
leaves. The ``resilience`` command's options are held to the same.

Hypothesis is derandomized (the same cases on every run) and keeps no
database; :data:`RUNS` cases in all, most refused in milliseconds, the
others simulated on worlds of a few hosts.
"""

import contextlib
import glob
import io
import json
import os
import re
import subprocess
import sys
import typing

from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
import pytest
import yaml

from nova_scoped_policies.cmd import main as cli
from nova_scoped_policies.simulator import scenario as sc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, 'examples', '*.yaml')))
RUNS = 160
"""Mutated scenarios the property-based test runs."""
FLAVOR = {'resources': {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}}
ZONE_NS = '6f72348f-df5d-4e0f-a043-4be92996dbfe'
CONTRACT = {
    'scopes': {'rack': {}, 'row': None,
               'zone': {'allow_identifiers': True,
                        'obfuscate_identifiers': True, 'namespace': ZONE_NS},
               'pod': {'parent': 'zone'}},
    'aggregates': [
        {'name': 'rack-a', 'scope': 'rack', 'hosts': ['h1', 'h2']},
        {'name': 'rack-b', 'scope': 'rack', 'hosts': ['h3', 'h4', 'n1']},
        {'name': 'zone-a', 'uuid': '0b7d4a3e-2f0c-4a57-9d55-3f3c8b1f0a11',
         'scope': 'zone', 'hosts': ['h1', 'h2', 'h3', 'h4']},
        {'name': 'pod-a', 'scope': 'pod', 'hosts': ['h1', 'h2']},
        {'name': 'win', 'metadata': {
            'trait:CUSTOM_WINDOWS_LICENSED': 'required', 'n': 1},
         'hosts': ['h4']}],
    'hosts': [
        {'name': 'h1', 'resources': {'VCPU': 8, 'MEMORY_MB': 16384,
                                     'DISK_GB': 200},
         'reserved': {'MEMORY_MB': 512},
         'inventory': {'VCPU': {'allocation_ratio': 2.0, 'min_unit': 1,
                                'max_unit': 8, 'step_size': 1}}},
        {'name': 'h2', 'resources': {'VCPU': 8, 'MEMORY_MB': 16384,
                                     'DISK_GB': 200, 'CUSTOM_GPU': 2}},
        {'name': 'h3', 'resources': {'VCPU': 16, 'MEMORY_MB': 32768,
                                     'DISK_GB': 400}},
        {'name': 'h4', 'resources': {'VCPU': 16, 'MEMORY_MB': 32768,
                                     'DISK_GB': 400},
         'traits': ['CUSTOM_WINDOWS_LICENSED', 'HW_CPU_X86_AVX2']}],
    'generate': {'hosts': {'count': 2, 'prefix': 'n', 'resources': {
        'VCPU': 8, 'MEMORY_MB': 16384, 'DISK_GB': 200}},
        'scopes': {'row': 2}},
    'config': {'enable_forbidden_aggregates_filter': True,
               'enable_scoped_policy_query_filter': True,
               'soft_anti_affinity_weight_multiplier': 2.0,
               'ram_weight_multiplier': 1.0,
               'enabled_filters': ['ComputeFilter', 'ScopedAffinityFilter',
                                   'ScopedAntiAffinityFilter',
                                   'ServerGroupAntiAffinityFilter',
                                   'ServerGroupAffinityFilter'],
               'filter_scheduler': {'cpu_weight_multiplier': 1.0}},
    'groups': [
        {'name': 'db', 'project': 'tenant-a',
         'policies': ['anti-affinity:rack'],
         'rules': {'max_server_per_rack': 2}},
        {'name': 'web', 'project': 'tenant-a',
         'policies': ['soft-anti-affinity:host']},
        {'name': 'job', 'llmn': {'level1': 'rack', 'level2': 'host',
                                 'n': 2}, 'rules': {'size': 4}}],
    'servers': [{'name': 'web-0', 'host': 'h3', 'project': 'tenant-a',
                 'group': 'web', 'flavor': FLAVOR}],
    'stacks': [{
        'name': 'app', 'project': 'tenant-a',
        'group': {'name': 'app', 'policies': ['anti-affinity:host'],
                  'servers': {'count': 2, 'flavor': {'resources': {
                      'VCPU': 1, 'MEMORY_MB': 1024}}}},
        'relationships': [{'from': 'app', 'to': {'server_group': 'db'},
                           'policies': ['soft-affinity:rack']}]}],
    'holds': [{'host': 'h2', 'resources': {'VCPU': 1, 'MEMORY_MB': 1024},
               'stack': 'app', 'server': 'app-1', 'project': 'tenant-a'}],
    'requests': [
        {'boot': {'name': 'db', 'group': 'db', 'count': 2,
                  'project': 'tenant-a', 'flavor': dict(
                      FLAVOR, extra_specs={'hw:cpu_policy': 'shared'}),
                  'image': {'properties': {'hw_architecture': 'x86_64'}}}},
        {'boot': {'name': 'win', 'flavor': FLAVOR, 'image': {'properties': {
            'trait:CUSTOM_WINDOWS_LICENSED': 'required'}}}},
        {'add_member': {'group': 'web', 'server': 'win-1'}},
        {'remove_member': {'group': 'web', 'server': 'win-1'}},
        {'update_group': {'group': 'web',
                          'policies': ['soft-affinity:rack']}},
        {'migrate': {'server': 'db-1'}},
        {'migrate': {'server': 'db-2', 'host': 'h2'}},
        {'plan': {'stack': 'app'}},
        {'boot_plan': {'stack': 'app'}},
        {'confirm': {'stack': 'app'}},
        {'delete': 'win-1'},
        {'fail_host': {'host': 'n2'}},
        {'fail_host': {'server': 'web-0'}},
        {'repair': {'group': 'db'}},
        {'repair': {'stack': 'app'}},
        {'repair': None},
        {'resilience': {'fail': 'rack', 'count': 1, 'cases': 2, 'seed': 7,
                        'groups': ['db']}}],
}
"""A scenario with every key of the contract (the network tree's keys
aside: the simulator does not read them yet)."""

Path = typing.Tuple[typing.Union[str, int], ...]


def fresh(value):
    """``value`` rebuilt with no object in two places (YAML would write
    an alias, and a mutation change both)."""
    if isinstance(value, dict):
        return {k: fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        return [fresh(v) for v in value]
    return value


def _documents() -> typing.Dict[str, dict]:
    found = {'contract': fresh(CONTRACT)}
    for path in EXAMPLES:
        with open(path, encoding='utf-8') as handle:
            found[os.path.basename(path)] = yaml.safe_load(handle)
    return found


DOCUMENTS = _documents()


def paths(value, prefix: Path = ()) -> typing.Iterator[Path]:
    """Every key and item of a document, depth first."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield prefix + (key,)
            yield from paths(inner, prefix + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield prefix + (i,)
            yield from paths(inner, prefix + (i,))


def at(document, path: Path):
    for part in path:
        document = document[part]
    return document


def shown(path: Path) -> str:
    """The key path as errors name it (``requests[2].boot.count``)."""
    out = ''
    for part in path:
        out += f'[{part}]' if isinstance(part, int) else (
            f'.{part}' if out else str(part))
    return out


def _deep(levels: int) -> list:
    found: list = ['x']
    for _ in range(levels):
        found = [found]
    return found


HUGE = [2 ** 31, 2 ** 63, -(2 ** 63) - 1, 10 ** 30, 1e308, float('inf'),
        'x' * 10000, 'h1 ' * 3000, ['n'] * 2000, {f'k{i}': i
                                                  for i in range(2000)},
        _deep(60)]
EMPTY = ['', [], {}, 0, None, ' ', 0.0, False]
SCALARS = st.one_of(
    st.integers(-3, 3), st.floats(allow_nan=True), st.booleans(),
    st.none(), st.text(max_size=8), st.sampled_from(HUGE + EMPTY))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(st.text(max_size=6), st.integers()), inner,
                    max_size=3)), max_leaves=6)


def _other_type(value) -> st.SearchStrategy:
    """A value of another JSON type than ``value``'s."""
    kinds = {bool: st.booleans(), int: st.integers(-5, 5),
             float: st.floats(-5, 5), str: st.text(max_size=5),
             type(None): st.none(), list: st.lists(st.integers(), max_size=2),
             dict: st.dictionaries(st.text(max_size=3), st.integers(),
                                   max_size=2)}
    own = type(value)
    return st.one_of(*(strategy for kind, strategy in kinds.items()
                       if kind is not own and not (
                           own is int and kind is float)))


def mutate(draw, document) -> typing.Tuple[str, Path]:
    """Change ``document`` in one place: (what changed, where)."""
    path = draw(st.sampled_from(list(paths(document))))
    kind = draw(st.sampled_from(
        ['type', 'type', 'junk', 'huge', 'empty', 'remove', 'any']))
    parent, last = at(document, path[:-1]), path[-1]
    if kind == 'type':
        parent[last] = draw(_other_type(parent[last]))
    elif kind == 'junk':
        target = parent[last]
        if isinstance(target, dict):
            junk = draw(st.one_of(st.text(min_size=1, max_size=10),
                                  st.integers(), st.booleans()))
            if junk in target:
                kind = 'any'
            target[junk] = fresh(draw(VALUES))
            path = path + (junk,)
        else:
            kind = 'any'
            parent[last] = {'junk': target}
    elif kind == 'huge':
        parent[last] = fresh(draw(st.sampled_from(HUGE)))
    elif kind == 'empty':
        parent[last] = fresh(draw(st.sampled_from(EMPTY)))
    elif kind == 'remove':
        del parent[last]
    else:
        parent[last] = fresh(draw(VALUES))
    return kind, path


@st.composite
def mutations(draw, times: int = 1):
    """(document name, the mutated document, what changed, where): one
    change, or ``times`` (then the last one's place, and ``any``)."""
    name = draw(st.sampled_from(sorted(DOCUMENTS)))
    document = fresh(DOCUMENTS[name])
    for _ in range(times):
        if not document:
            break
        kind, path = mutate(draw, document)
    return name, document, kind if times == 1 else 'any', path


def simulate(argv) -> typing.Tuple[int, str, str]:
    """``nova-scoped-policies ARGV`` as the console script runs it, in
    this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:    # argparse
            status = exc.code
    return status, out.getvalue(), err.getvalue()


def named_key(line: str, file: str) -> str:
    """The key path an error line names (``''``: the document)."""
    assert line.startswith(f'error: {file}: '), line
    text = line[len(f'error: {file}: '):]
    head = text.split(': ', 1)[0]
    # a path: words, [n] and .key or .'quoted key'
    if re.fullmatch(r"([\w:\-/]+|'[^']*'|\"[^\"]*\"|\[\d+\])"
                    r"(\.([\w:\-/]+|'[^']*'|\"[^\"]*\")|\[\d+\])*", head):
        return head
    return ''


def resolves(document, key: str) -> bool:
    """Does ``key`` name something in ``document``, or a required key it
    lacks (``rules.size`` of a group without ``rules``)?"""
    if not key:
        return True
    parts = re.findall(r"\[(\d+)\]|\.?('[^']*'|\"[^\"]*\"|[^.\[]+)", key)
    node, found = document, 0
    for index, name in parts:
        if index:
            if not isinstance(node, list) or int(index) >= len(node):
                break
            node = node[int(index)]
        else:
            name = name.strip('\'"')
            keys = {str(k): k for k in node} if isinstance(node, dict) \
                else {}
            if name not in keys:
                break
            node = node[keys[name]]
        found += 1
    return found >= len(parts) - 2


def check(tmp_path, name, document, kind, path):
    file = str(tmp_path / 'scenario.yaml')
    with open(file, 'w', encoding='utf-8') as handle:
        yaml.safe_dump(document, handle)
    with open(file, encoding='utf-8') as handle:
        read = yaml.safe_load(handle)    # what simulate reads
    status, out, err = simulate(['simulate', file, '--format', 'json'])
    where = f'{name}: {kind} at {shown(path)}'
    assert status in (0, 2), (where, status, err[-2000:])
    assert 'Traceback' not in err, (where, err[-2000:])
    if status == 0:
        assert out.startswith('{'), where
        return
    lines = err.splitlines()
    assert len(lines) == 1 and len(err) <= 600, (where, err[:2000])
    key = named_key(lines[0], file)
    assert resolves(read, key), (where, lines[0])
    mutated = shown(path)
    if kind == 'type' and not (key.startswith(mutated)
                               or mutated.startswith(key)):
        # the schema types every value: a value of the wrong type is
        # named (or a key of its own, or the mapping it is a key of);
        # one named elsewhere was of a type its key takes (a section
        # of null), refused for what it means
        assert sc.schema_error(read) is None, (where, lines[0])


@settings(max_examples=RUNS, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow,
                                 HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(mutations())
def test_a_mutated_scenario_exits_0_or_2_naming_the_key(tmp_path, mutation):
    check(tmp_path, *mutation)


def test_the_contract_runs(tmp_path):
    """The scenario of every key is valid and runs every request: a
    mutation is what makes it bad (the examples run in
    test_fast_engine)."""
    file = str(tmp_path / 'contract.yaml')
    with open(file, 'w', encoding='utf-8') as handle:
        yaml.safe_dump(fresh(CONTRACT), handle)
    status, out, err = simulate(['simulate', file, '--format', 'json'])
    assert (status, err) == (0, '')
    report = json.loads(out)
    assert report['plans']['app']['status'] == 'reserved'
    assert [r['status'] for r in report['repairs']] and report['resilience']


@pytest.mark.parametrize('path', list(dict.fromkeys(paths(CONTRACT))),
                         ids=shown)
def test_every_contract_key_of_the_wrong_type(tmp_path, path):
    """A list of lists at each key of the contract, a type no key takes:
    refused, naming it."""
    document = fresh(CONTRACT)
    at(document, path[:-1])[path[-1]] = [[1]]
    check(tmp_path, 'contract', document, 'type', path)


def _example(name: str) -> dict:
    return fresh(DOCUMENTS[name])


def _crashed_once():
    """The three mutations of the issue that ended in a traceback."""
    group = _example('rack-anti-affinity.yaml')
    group['requests'][0]['boot']['group'] = ['db']
    hosts = _example('licensed-windows.yaml')
    hosts['aggregates'][0]['hosts'].append(['h2'])
    option = _example('rack-anti-affinity.yaml')
    option['config']['enable_scoped_policy_query_filter'] = -1
    last = len(hosts['aggregates'][0]['hosts']) - 1
    return [(group, 'requests[0].boot.group'),
            (hosts, f'aggregates[0].hosts[{last}]'),
            (option, 'config.enable_scoped_policy_query_filter')]


@pytest.mark.parametrize('index', range(3))
def test_what_crashed_is_one_line_as_a_whole_process(tmp_path, index):
    """As the console script runs, in a process of its own."""
    document, key = _crashed_once()[index]
    file = str(tmp_path / 'bad.yaml')
    with open(file, 'w', encoding='utf-8') as handle:
        yaml.safe_dump(document, handle)
    found = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable),
                      'nova-scoped-policies'), 'simulate', file],
        capture_output=True, text=True, timeout=600)
    assert (found.returncode, found.stdout) == (2, '')
    (line,) = found.stderr.splitlines()
    assert line.startswith(f'error: {file}: {key}: ')


@pytest.mark.parametrize('options, key', [
    (['--fail', 'rack', '--count', '0'], '--count'),
    (['--fail', 'rack', '--count', '99'], '--count'),
    (['--fail', 'rack', '--cases', '0'], '--cases'),
    (['--fail', 'rack', '--cases', str(10 ** 12)], '--cases'),
    (['--fail', 'rack', '--seed', str(2 ** 70)], '--seed'),
    (['--fail', 'rack', '--group', 'nope'], '--group'),
    (['--fail', 'rack', '--group', 'a b'], '--group'),
    (['--fail', 'nowhere'], '--fail'),
    (['--fail', 'x' * 5000], '--fail'),
    (['--fail', ''], '--fail'),
])
def test_resilience_options_are_one_line_naming_the_option(options, key):
    """The ``resilience`` command's own request is checked as the
    scenario's are, and its errors name the option."""
    status, out, err = simulate([
        'resilience', os.path.join(ROOT, 'examples', 'resilience-racks.yaml'),
        *options])
    assert (status, out) == (2, ''), err
    (line,) = err.splitlines()
    assert f': {key}: ' in line and len(line) <= 600, line


@pytest.mark.parametrize('name', ['resilience-racks.yaml',
                                  'rack-anti-affinity.yaml'])
def test_the_resilience_command_reads_mutated_scenarios(tmp_path, name):
    """The command's scenario is the same document: a bad one is one
    line and exit 2."""
    document = _example(name)
    document['hosts' if 'hosts' in document else 'generate'] = [[1]]
    file = str(tmp_path / 'bad.yaml')
    with open(file, 'w', encoding='utf-8') as handle:
        yaml.safe_dump(document, handle)
    status, out, err = simulate(['resilience', file, '--fail', 'rack'])
    assert (status, out) == (2, '')
    assert len(err.splitlines()) == 1


YAML_ONLY = {
    # a billion values from a few lines: aliases of aliases
    'bomb': '\n'.join(
        ['hosts: [{name: h1, resources: {VCPU: 1}}]', 'groups:',
         '  - {name: g0, policies: &a0 [anti-affinity:host]}'] + [
            f'  - {{name: g{i}, policies: &a{i} ['
            + ', '.join([f'*a{i - 1}'] * 10) + ']}' for i in range(1, 10)]),
    'cycle': 'hosts: &a [{name: h1, resources: {VCPU: 1}}, *a]',
    'deep': 'hosts: [{name: h1, resources: {VCPU: 1}}]\nstacks: '
            + '[' * 5000 + ']' * 5000,
    'nested stack': 'hosts: [{name: h1, resources: {VCPU: 1}}]\n'
                    'stacks: [{name: s, group: ' + ''.join(
                        f'{{name: l{i}, members: [&a{i} ' for i in range(40))
                    + '{name: x}' + ''.join(
                        f', *a{i}]}}' for i in reversed(range(40))) + '}]',
    'unreadable': 'hosts: [unclosed\n  - {',
    'not utf-8': b'hosts: [{name: \xff}]'.decode('latin-1'),
}


@pytest.mark.parametrize('name', sorted(YAML_ONLY))
def test_what_only_yaml_can_write(tmp_path, name):
    """Aliases that repeat a value a billion times or inside itself,
    nesting beyond any parser's recursion, text that is not YAML: one
    line, exit 2, at once."""
    file = str(tmp_path / 'scenario.yaml')
    with open(file, 'w', encoding='latin-1') as handle:
        handle.write(YAML_ONLY[name] + '\n')
    status, out, err = simulate(['simulate', file])
    assert (status, out) == (2, ''), err[-2000:]
    (line,) = err.splitlines()
    assert line.startswith(f'error: {file}: ') and len(line) <= 600


def test_an_alias_of_a_flavor_is_fine(tmp_path):
    file = str(tmp_path / 'scenario.yaml')
    with open(file, 'w', encoding='utf-8') as handle:
        handle.write('hosts: [{name: h1, resources: {VCPU: 4}}]\n'
                     'requests:\n'
                     '  - {boot: {name: a, flavor: &f {resources: '
                     '{VCPU: 1}}}}\n'
                     '  - {boot: {name: b, flavor: *f}}\n')
    status, out, err = simulate(['simulate', file, '--format', 'json'])
    assert (status, err) == (0, '')
    assert json.loads(out)['final'] == {'a-1': 'h1', 'b-1': 'h1'}
