"""The stack document: shape, meaning and errors that name the field."""

import copy

import hypothesis
from hypothesis import strategies as st
import pytest

from nova_scoped_policies.stacks import model
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope

SG = '9c3f0c7e-7a55-4b33-9d55-0f0e6b1c2d3e'
# the example of shared/contracts/stack-document.md
CONTRACT = {'stack': {
    'name': 'appservers', 'lease_seconds': 600,
    'group': {
        'name': 'root',
        'policies': ['anti-affinity:rack', 'soft-affinity:row'],
        'members': [
            {'name': 'c1',
             'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
             'servers': {'count': 4, 'flavor': {
                 'resources': {'VCPU': 4, 'MEMORY_MB': 8192},
                 'traits': {'required': ['CUSTOM_SSD']}}}},
            {'name': 'c2',
             'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
             'servers': {'count': 4, 'flavor': {
                 'resources': {'VCPU': 4, 'MEMORY_MB': 8192}}}},
            {'name': 'db', 'policies': ['anti-affinity:host'],
             'rules': {'size': 2},
             'servers': {'names': ['db-a', 'db-b'], 'flavor': {
                 'resources': {'VCPU': 8, 'MEMORY_MB': 32768}}}}]},
    'relationships': [
        {'from': 'c1', 'to': 'db', 'policies': ['soft-affinity:row']},
        {'from': 'c2', 'to': {'server_group': SG.upper()},
         'policies': ['anti-affinity:zone']}]}}


def test_contract_example():
    stack = model.parse(CONTRACT)
    assert stack.name == 'appservers' and stack.lease_seconds == 600
    assert [s.name for s in stack.servers] == [
        'c1-1', 'c1-2', 'c1-3', 'c1-4', 'c2-1', 'c2-2', 'c2-3', 'c2-4',
        'db-a', 'db-b']
    c1 = stack.group('c1')
    assert c1.leaf and c1.servers[0].flavor.required == {'CUSTOM_SSD'}
    # LLMN takes M from the group's server count
    assert c1.document.rules.size == 4
    assert c1.document.rules.max_server_per == {'rack': 2}
    assert stack.scopes == {'host', 'rack', 'row', 'zone'}
    rel = stack.relationships[1]
    assert rel.target == model.Existing('server_group', SG)
    assert not stack.root.leaf and len(stack.root.members) == 3


def _mutated(change):
    data = copy.deepcopy(CONTRACT)
    change(data['stack'])
    return data


BAD = [
    (lambda s: s.update(bogus=1), 'stack.bogus', 'unknown key'),
    (lambda s: s.pop('group'), 'stack.group', 'is required'),
    (lambda s: s['group']['members'][1]['servers'].update(count=0),
     'stack.group.members[1].servers.count', 'at least 1'),
    (lambda s: s['group']['members'][1].update(name='c1'),
     'stack.group.members[1].name', 'group c1 is also'),
    (lambda s: s['group']['members'][2]['servers'].update(names=['c1-1']),
     'stack.group.members[2].servers.names[0]', 'server c1-1 is also'),
    (lambda s: s['relationships'][0].update(to='nothere'),
     'stack.relationships[0].to', 'no group nothere'),
    (lambda s: s['relationships'][0].update(to='root'),
     'stack.relationships[0].to', 'share servers'),
    (lambda s: s['group']['members'][2]['servers']['flavor'][
        'resources'].update(VCPU='9' * 5000),
     'stack.group.members[2].servers.flavor.resources.VCPU', 'integer'),
    (lambda s: s['group']['members'][0]['llmn'].update(n=9),
     'stack.group.members[0].llmn.n', 'cannot spread'),
    (lambda s: s['group'].update(llmn={}), 'stack.group.llmn',
     'group of groups'),
    (lambda s: s['group'].update(rules={'min_domains_rack': 2}),
     'stack.group.rules.min_domains_rack', 'only max_server_per'),
    (lambda s: s['group']['members'][2]['servers'].update(count=3),
     'stack.group.members[2].servers', 'either count or names'),
    (lambda s: s['group']['members'][2].pop('servers'),
     'stack.group.members[2]', 'either members or servers'),
    (lambda s: s['group']['members'][2].update(rules={'size': 3}),
     'stack.group.members[2].rules.size', 'has 2 servers'),
    (lambda s: s['group'].update(policies=['anti-affinity:rack:r1']),
     'stack.group.policies[0]', 'belongs on a group of servers'),
    (lambda s: s['group'].update(policies=['affinity:rack',
                                           'anti-affinity:rack']),
     'stack.group.policies', 'contradict each other'),
    (lambda s: s['group']['members'][0]['servers']['flavor'].update(
        traits={'required': ['CUSTOM_X'], 'forbidden': ['CUSTOM_X']}),
     'stack.group.members[0].servers.flavor.traits', 'both'),
    (lambda s: s['group']['members'][0]['servers']['flavor'].update(
        resources={'vcpus': 1}),
     'stack.group.members[0].servers.flavor.resources', 'must match'),
    (lambda s: s['relationships'][1]['to'].update(server_group='x' * 36),
     'stack.relationships[1].to', 'group name'),
    (lambda s: s.update(lease_seconds=0), 'stack.lease_seconds',
     'at least 1'),
]


@pytest.mark.parametrize('change,field,words', BAD)
def test_errors_name_the_field(change, field, words):
    with pytest.raises(model.StackError) as caught:
        model.parse(_mutated(change))
    assert caught.value.field == field
    assert words in caught.value.message
    assert len(str(caught.value)) < 300


def test_depth_and_size_are_bounded():
    group = {'name': 'leaf', 'servers': {'count': 1, 'flavor': {
        'resources': {'VCPU': 1}}}}
    for i in range(model.MAX_DEPTH):
        group = {'name': f'g{i}', 'members': [group]}
    with pytest.raises(model.StackError, match='nest at most'):
        model.parse({'stack': {'name': 's', 'group': group}})
    many = {'stack': {'name': 's', 'group': {'name': 'r', 'members': [
        {'name': f'g{i}', 'servers': {'count': 600, 'flavor': {
            'resources': {'VCPU': 1}}}} for i in range(2)]}}}
    with pytest.raises(model.StackError, match='at most 1000 servers'):
        model.parse(many)


def _topology(parent=None):
    racks = [Domain(f'r{i}', f'rack{i}', 'rack',
                    frozenset({f'h{2 * i}', f'h{2 * i + 1}'}))
             for i in range(4)]
    rows = [Domain('w0', 'row0', 'row', frozenset({'h0', 'h1', 'h2'})),
            Domain('w1', 'row1', 'row',
                   frozenset({'h3', 'h4', 'h5', 'h6', 'h7'}))]
    return Topology([Scope('rack', parent=parent), Scope('row'),
                     Scope('zone')], racks + rows)


def test_check_topology_names_unknown_scopes_and_broken_nesting():
    stack = model.parse(CONTRACT)
    model.check_topology(stack, _topology())
    with pytest.raises(model.StackError) as caught:
        model.check_topology(stack, Topology([Scope('rack'), Scope('row')]))
    assert caught.value.field == 'stack.relationships[1].policies[0]'
    assert 'zone is not defined' in caught.value.message
    with pytest.raises(model.StackError) as caught:
        model.check_topology(stack, _topology(parent='row'))
    # rack1 holds h2 (row0) and h3 (row1)
    assert 'rack1' in caught.value.message
    assert 'row0, row1' in caught.value.message


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(['name', 'group', 'members', 'servers', 'count',
                         'flavor', 'resources', 'policies', 'rules', 'llmn',
                         'from', 'to', 'VCPU', 'stack', 'names']),
        inner, max_size=4),
    max_leaves=12)


def _paths(data, prefix=()):
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _paths(value, prefix + (i,))


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(data=st.data())
def test_any_document_parses_or_names_a_field(data):
    doc = copy.deepcopy(CONTRACT)
    paths = [p for p in _paths(doc) if p]
    path = data.draw(st.sampled_from(paths))
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = data.draw(_JSON)
    try:
        stack = model.parse(doc)
    except model.StackError as exc:
        assert exc.field.startswith('stack') or exc.field in ('body',)
        assert len(str(exc)) < 400
    else:
        assert stack.servers
