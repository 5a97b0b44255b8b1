"""hops, soft-hops and bandwidth beyond their rows: the reasons they
give, their audits, their joint encoding on stacks (leaf groups, groups
of groups, relationships, existing servers) and bandwidth's loads.

The world is the plugins' (``plugins/world.py``): tor-1 (h1, h2) and
tor-2 (h3, h4) in pod-1, tor-3 (h5) and h6 on pod-2's own switch, both
pods in spine-1, h7 off the tree.
"""

import itertools
import random

import pytest

from nova_scoped_policies import engine
from nova_scoped_policies.engine import audit
from nova_scoped_policies.engine.plugins import bandwidth
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.stacks import model as stack_model
from nova_scoped_policies.stacks import solver
from nova_scoped_policies.stacks import world as stack_world
from nova_scoped_policies import topology as topo
from tests.unit.engine.plugins.world import DOMAINS
from tests.unit.engine.plugins.world import HOPS
from tests.unit.engine.plugins.world import HOSTS
from tests.unit.engine.plugins.world import TOPOLOGY
from tests.unit.engine.plugins.world import world_aggregates
from tests.unit.engine.plugins.world import world_scopes

NETWORK = TOPOLOGY.network


def test_the_world_of_the_rows():
    for (a, b), hops in HOPS.items():
        assert NETWORK.hops(a, b) == hops


def evaluate(policies, placements, **kwargs):
    return engine.Engine().prepare(engine.Request(
        parse_document({'policies': policies}, stack=True), TOPOLOGY,
        placements, **kwargs))


def test_a_rejection_names_the_member_too_far():
    ev = evaluate(['hops:2'], {'m1': 'h1', 'm2': 'h2'})
    assert ev.reasons('h2') == ()
    (reason,) = ev.reasons('h3')
    assert reason.message == ('hops:2: host h3 is 4 hops from member m1 '
                              '(on h1), more than 2')
    assert (reason.code, reason.count, reason.limit) == ('too-far', 4, 2)
    (reason,) = ev.reasons('h7')
    assert reason.message == ('hops:2: host h7 has no network path to '
                              'member m1 (on h1): host h7 is in no network '
                              'domain')
    assert engine.summary({h: ev.reasons(h) for h in ('h3', 'h4')}) == (
        'scoped policies: hops:2: all 2 hosts left are more than 2 network '
        'hops from a placed member')
    assert engine.summary({'h7': ev.reasons('h7')}) == (
        'scoped policies: hops:2: all 1 hosts left have no network path to '
        'a placed member')


def test_servers_of_the_same_request_and_moves():
    ev = evaluate(['hops:0'], {}, in_flight=['h4'])
    assert [r.message for r in ev.reasons('h3')] == [
        'hops:0: host h3 is 2 hops from member another server of this '
        'request (on h4), more than 0']
    # a moving member is not counted against itself
    ev = evaluate(['hops:2'], {'me': 'h5', 'm1': 'h1'}, instance_uuid='me')
    assert not ev.reasons('h2') and ev.reasons('h5')


def test_no_placement_constraint_can_hold_a_host_off_the_tree():
    from nova_scoped_policies.engine import placement_query
    ev = evaluate(['hops:0'], {'m1': 'h7'})
    assert not placement_query.constraints(ev)
    # members already too far apart: nothing passes, nothing to push down
    ev = evaluate(['hops:2'], {'m1': 'h1', 'm2': 'h3'})
    assert not placement_query.constraints(ev)
    assert all(ev.reasons(h) for h in HOSTS)


def run_audit(policies, placed):
    return list(audit.audit(parse_document({'policies': policies},
                                           stack=True), TOPOLOGY,
                            placed).violations)


def test_the_audit_names_every_pair_too_far_apart():
    assert run_audit(['hops:4'], {'a': 'h1', 'b': 'h2', 'c': 'h5',
                                  'd': 'h6', 'e': 'h7'}) == [
        'hops:4: a, b and c are 6 hops apart, more than 4',
        'hops:4: a, b and d are 5 hops apart, more than 4',
        'hops:4: a, b and e have no network path: host h7 is in no '
        'network domain',
        'hops:4: c and e have no network path: host h7 is in no network '
        'domain',
        'hops:4: d and e have no network path: host h7 is in no network '
        'domain']
    assert run_audit(['hops:0'], {'a': 'h1', 'b': 'h1', 'c': 'h2'}) == [
        'hops:0: a, b and c are 2 hops apart, more than 0']


def test_an_audit_view_with_parts_judges_pairs_across_parts_only():
    view = base.AuditView(TOPOLOGY, parse_document({}).rules,
                          {'a1': 'h1', 'a2': 'h5', 'b1': 'h6'}, {}, str,
                          lambda item: None)
    item = registry.items(parse_document({'policies': ['hops:4']}))[0][1]
    plugin = registry.plugin_of(item.policy.type)
    assert plugin.audit(item, view) == [
        'hops:4: a1 and a2 are 6 hops apart, more than 4',
        'hops:4: a1 and b1 are 5 hops apart, more than 4']
    object.__setattr__(view, 'part', lambda member: member[0])
    assert plugin.audit(item, view) == [
        'hops:4: a1 and b1 are 5 hops apart, more than 4']


# -- the joint decision -------------------------------------------------------

TRAIT = 'CUSTOM_NOT_H6'


def world(vcpu=1, servers=None):
    topology = topo.from_aggregates(world_aggregates(), world_scopes())
    return stack_world.World(tuple(
        stack_world.HostState(h, f'rp-{h}', {'VCPU': vcpu},
                              frozenset() if h == 'h6' else {TRAIT})
        for h in HOSTS), topology, servers or {})


def decide(group, relationships=(), vcpu=1, servers=None):
    stack = stack_model.parse({'stack': {
        'name': 's', 'group': group, 'relationships': list(relationships)}})
    return solver.decide(stack, world(vcpu, servers), time_limit=20,
                         search=True)


def leaf(name, count, *policies, not_h6=False):
    flavor = {'resources': {'VCPU': 1}}
    if not_h6:
        flavor['traits'] = {'required': [TRAIT]}
    return {'name': name, 'policies': list(policies),
            'servers': {'count': count, 'flavor': flavor}}


@pytest.mark.parametrize('policy, count, fits', [
    ('hops:2', 8, True), ('hops:2', 9, False),
    # pod-2: h5 under tor-3 and h6 on the pod's switch are 3 apart
    ('hops:3', 8, True), ('hops:3', 9, False),
    ('hops:4', 16, True), ('hops:4', 17, False),
    ('hops:5', 20, True), ('hops:5', 21, False),
    ('hops:6', 24, True), ('hops:6', 25, False),
    ('hops:0', 4, True), ('hops:0', 5, False),
])
def test_a_group_within_n_hops(policy, count, fits):
    decision = decide(leaf('g', count, policy), vcpu=4)
    assert decision.feasible == fits, decision.reason
    if fits:
        placed = decision.assignments
        assert run_audit([policy], placed) == []
    else:
        assert policy in decision.reason


def test_pairs_across_member_groups_only():
    # a1 and a2 in two pods, not on h6: one is h5, 6 hops from the other;
    # b1 within 5 hops of both: h6 only (a1 and a2 are not a pair)
    group = {'name': 'root', 'members': [
        leaf('a', 2, 'anti-affinity:pod', not_h6=True), leaf('b', 1)]}
    decision = decide(group, [{'from': 'a', 'to': 'b',
                               'policies': ['hops:5']}])
    assert decision.feasible, decision.reason
    assert decision.assignments['b-1'] == 'h6'
    # the same across the member groups of a group of groups
    group = {'name': 'root', 'policies': ['hops:5'], 'members': [
        leaf('a', 2, 'anti-affinity:pod', not_h6=True), leaf('b', 1)]}
    decision = decide(group)
    assert decision.feasible, decision.reason
    assert decision.assignments['b-1'] == 'h6'
    decision = decide(group | {'policies': ['hops:4']})
    assert not decision.feasible


def test_a_relationship_to_an_existing_server():
    server = '7f1d6a7e-0c36-4c0e-9a43-1f1ab0f6c2a3'
    decision = decide(leaf('g', 2), [{'from': 'g', 'to': {'server': server},
                                      'policies': ['hops:2']}],
                      servers={server: 'h3'})
    assert decision.feasible, decision.reason
    assert sorted(decision.assignments.values()) == ['h3', 'h4']
    decision = decide(leaf('g', 3), [{'from': 'g', 'to': {'server': server},
                                      'policies': ['hops:2']}],
                      servers={server: 'h3'})
    assert not decision.feasible


def test_soft_hops_is_the_objective():
    decision = decide(leaf('g', 2, 'soft-hops:2', 'anti-affinity'))
    assert decision.feasible and decision.cost == 0
    a, b = decision.assignments.values()
    assert NETWORK.hops(a, b) == 2
    # four servers cannot share a switch: the fewest branches apart
    decision = decide(leaf('g', 4, 'soft-hops:2', 'anti-affinity'))
    assert decision.feasible and decision.cost == 1
    hosts = set(decision.assignments.values())
    assert hosts == {'h1', 'h2', 'h3', 'h4'}
    server = '7f1d6a7e-0c36-4c0e-9a43-1f1ab0f6c2a3'
    decision = decide(leaf('g', 1), [{'from': 'g', 'to': {'server': server},
                                      'policies': ['soft-hops:3']}],
                      servers={server: 'h5'})
    assert decision.cost == 0
    assert decision.assignments['g-1'] in {'h5', 'h6'}


# -- bandwidth ----------------------------------------------------------------

def brute(parts, kbps, across):
    """Each pair's rate on each edge of its path, pair by pair."""
    found = {}
    flat = [(i, h) for i, hosts in enumerate(parts) for h in hosts]
    for (i, a), (j, b) in itertools.combinations(flat, 2):
        if across and i == j:
            continue
        for edge in NETWORK.path(a, b) or ():
            found[edge] = found.get(edge, 0) + kbps
    return found


@pytest.mark.parametrize('seed', range(20))
def test_loads_counted_per_domain_are_every_pairs_path(seed):
    rng = random.Random(seed)
    parts = [[rng.choice(HOSTS) for _ in range(rng.randint(0, 6))]
             for _ in range(rng.randint(1, 3))]
    assert dict(bandwidth.loads(NETWORK, parts, 7, across=True)) == \
        brute(parts, 7, True)
    flat = [h for hosts in parts for h in hosts]
    assert dict(bandwidth.loads(NETWORK, [flat], 7)) == \
        brute([flat], 7, False)


def test_pairs_without_a_path():
    assert bandwidth.unrouted(NETWORK, [['h1', 'h7', 'h2', 'h7']]) == [
        ((0, ['h1', 'h2']), (0, ['h7']))]
    assert bandwidth.unrouted(NETWORK, [['h1', 'h7'], ['h2']],
                              across=True) == [((1, ['h2']), (0, ['h7']))]


def tight(tenant=False):
    """The world with 3 Gbit top-of-rack uplinks, 1 Gbit used of
    tor-1's."""
    topology = topo.from_aggregates(
        world_aggregates(), [s if s.name != 'tor' else
                             type(s)(s.name, s.aggregates, s.parent, 3000000)
                             for s in world_scopes()])
    network = topology.network.with_used({('tor', 'tor-1'): 1000000})
    if tenant:
        network.uplinks = topo.Uplinks(tenant_view=True)
    return network


def test_shortages_in_the_readers_words():
    network = tight()
    load = bandwidth.loads(network, [['h1', 'h2'], ['h3', 'h4']], 1000000,
                           across=True)
    assert dict(load) == {
        ('host', h): 2000000 for h in ('h1', 'h2', 'h3', 'h4')} | {
        ('tor', 'tor-1'): 4000000, ('tor', 'tor-2'): 4000000}
    found = bandwidth.shortages(network, load)
    assert found == [bandwidth.Shortage(('tor', 'tor-1'), 4000000, 2000000),
                     bandwidth.Shortage(('tor', 'tor-2'), 4000000, 3000000)]
    assert bandwidth.words(network, found[0]) == (
        'uplink of tor-1 needs 4000000 kbit/s, 2000000 free')
    assert bandwidth.words(tight(tenant=True), found[0]) == (
        'an uplink at the tor level is 2000000 kbit/s short')
    assert [(e.name, e.capacity, e.load) for e in
            bandwidth.busiest(network, load)] == [
        ('tor-1', 3000000, 4000000), ('tor-2', 3000000, 4000000)]


def test_the_audit_of_bandwidth():
    rules = parse_document({}).rules
    item = registry.items(parse_document(
        {'policies': ['bandwidth:1Gbit']}, stack=True))[0][1]
    plugin = registry.plugin_of(item.policy.type)
    topology = topo.from_aggregates(
        world_aggregates(), [s if s.name != 'tor' else
                             type(s)(s.name, s.aggregates, s.parent, 3000000)
                             for s in world_scopes()])
    view = base.AuditView(topology, rules,
                          {'a': 'h1', 'b': 'h2', 'c': 'h3', 'd': 'h4',
                           'e': 'h7'}, {}, str, lambda item: None)
    assert plugin.audit(item, view) == [
        'bandwidth:1Gbit: a, b, c, d and e have no network path: host h7 '
        'is in no network domain',
        'bandwidth:1Gbit: uplink of tor-1 needs 4000000 kbit/s, 3000000 '
        'free',
        'bandwidth:1Gbit: uplink of tor-2 needs 4000000 kbit/s, 3000000 '
        'free']
    object.__setattr__(view, 'part', lambda m: m in 'ac')
    assert plugin.audit(item, view) == [
        'bandwidth:1Gbit: a, c and e have no network path: host h7 is in no '
        'network domain']
    # b shares a's host: only e, of the other part, is named with a
    object.__setattr__(view, 'placed', {'a': 'h1', 'b': 'h1', 'e': 'h7'})
    assert plugin.audit(item, view) == [
        'bandwidth:1Gbit: a and e have no network path: host h7 is in no '
        'network domain']


def test_bandwidth_is_a_stacks_policy():
    with pytest.raises(Exception, match='belongs in a stack'):
        parse_document({'policies': ['bandwidth:1Gbit']})
    document = parse_document({'policies': ['bandwidth:1Gbit']},
                              stack=True)
    assert bandwidth.rate(document.policies[0]) == 1000000
    # the solver merges hosts alike in their switch and own edge only
    key = registry.plugin_of(document.policies[0].type).host_key(
        None, TOPOLOGY)
    assert key('h1') == key('h2') == ('tor-1', None)
    assert key('h7') == (None, None)
    assert DOMAINS['tor']['tor-1'] == ['h1', 'h2']
