"""The repair planner: a table of cases (fewest moves, a swap no order of
single moves can make, impossible with the reason, capacity and traits
respected, other servers moved to make room), each plan checked step by
step, each server moved once."""

import collections
import dataclasses
import itertools

import pytest

from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.repair import planner
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver
from nova_scoped_policies.stacks.world import World
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope


def cloud(racks, free=2, traits=None):
    """``racks``: rack -> host names; every host has ``free`` VCPU left
    (or ``free[host]``) once the servers are counted."""
    domains = [Domain(r, r, 'rack', frozenset(hs)) for r, hs in racks.items()]
    hosts = tuple(planner.Host(h, {'VCPU': free.get(h, 0)
                                   if isinstance(free, dict) else free},
                               frozenset((traits or {}).get(h, ())))
                  for hs in racks.values() for h in hs)
    return hosts, Topology([Scope('rack')], domains)


def servers(where, required=None):
    return {s: planner.Server(s, h, {'VCPU': 1},
                              frozenset((required or {}).get(s, ())))
            for s, h in where.items()}


def group(name, policies, members, rules=None):
    document = {'policies': policies}
    if rules:
        document['rules'] = rules
    return planner.Target.group(name, parse_document(document), members)


def replay(problem, plan):
    """Take the plan's moves one by one: each fits the capacity left and
    adds no violation; returns where the servers end."""
    state = planner._State(problem)
    count = len(state.violations(problem.targets))
    for move in plan.moves:
        server = problem.servers[move.server]
        assert state.placed[move.server] == move.source
        assert state.fits(server, move.destination), move
        broken = state.broken(problem.targets)
        state.move(server, move.destination)
        now = len(state.violations(problem.targets))
        assert now <= count and state.broken(problem.targets) <= broken, (
            move, state.violations(problem.targets))
        count = now
    return state


RACKS3 = {'rA': ['a1', 'a2'], 'rB': ['b1', 'b2'], 'rC': ['c1', 'c2']}


def spread_case():
    hosts, topology = cloud(RACKS3)
    where = {'x': 'a1', 'y': 'a2', 'z': 'b1'}
    return planner.Problem(hosts, servers(where), (
        group('g', ['anti-affinity:rack'], where),), topology)


def swap_case():
    """A stack of two pairs, each pair in one rack (affinity:rack): p1 and
    q2 share host hA, p2 and q1 host hB, both full; hC has room for one
    server. The fewest hosts changed is the swap p1 <-> q1, which needs a
    detour through hC: one of them would move twice."""
    hosts, topology = cloud({'rA': ['hA'], 'rB': ['hB'], 'rC': ['hC']},
                            free={'hA': 0, 'hB': 0, 'hC': 1})
    where = {'p1': 'hA', 'p2': 'hB', 'q1': 'hB', 'q2': 'hA'}
    stack = model.parse({'stack': {'name': 's', 'group': {
        'name': 'root', 'members': [
            {'name': 'p', 'policies': ['affinity:rack'], 'servers': {
                'count': 2, 'flavor': {'resources': {'VCPU': 1}}}},
            {'name': 'q', 'policies': ['affinity:rack'], 'servers': {
                'count': 2, 'flavor': {'resources': {'VCPU': 1}}}}]}}})
    instances = {'p-1': 'p1', 'p-2': 'p2', 'q-1': 'q1', 'q-2': 'q2'}
    target = planner.Target.stack('s', stack, World((), topology),
                                  instances)
    return planner.Problem(hosts, servers(where), (target,), topology)


def impossible_case():
    hosts, topology = cloud({'rA': ['a1', 'a2'], 'rB': ['b1', 'b2']})
    where = {'x': 'a1', 'y': 'a2', 'z': 'b1'}
    return planner.Problem(hosts, servers(where), (
        group('g', ['anti-affinity:rack'], where),), topology)


def capacity_case():
    # rC, the one rack left, has no room
    hosts, topology = cloud(RACKS3, free={'a1': 2, 'a2': 2, 'b1': 2,
                                          'b2': 2})
    where = {'x': 'a1', 'y': 'a2', 'z': 'b1'}
    return planner.Problem(hosts, servers(where), (
        group('g', ['anti-affinity:rack'], where),), topology)


def traits_case():
    # only c2 of rack rC has the trait x needs; y can go nowhere else
    hosts, topology = cloud(RACKS3, traits={'a1': ['CUSTOM_SSD'],
                                            'a2': ['CUSTOM_A'],
                                            'c2': ['CUSTOM_SSD']})
    where = {'x': 'a1', 'y': 'a2', 'z': 'b1'}
    need = {'x': ['CUSTOM_SSD'], 'y': ['CUSTOM_A']}
    return planner.Problem(hosts, servers(where, need), (
        group('g', ['anti-affinity:rack'], where),), topology)


def swap_with_room_case():
    """The swap of :func:`swap_case` with a third server L in no group on
    hA (three slots): the fewest moves (the swap alone) have no order, so
    L goes to hC first to open hA; three moves, each server once."""
    problem = swap_case()
    hosts = tuple(dataclasses.replace(h, free={'VCPU': 1 if h.name == 'hC'
                                               else 0})
                  for h in problem.hosts)
    return dataclasses.replace(problem, hosts=hosts, servers=dict(
        problem.servers, L=planner.Server('L', 'hA', {'VCPU': 1})))


def _full(policy):
    """g (anti-affinity:host) has both servers on hA; only hA and hB have
    the trait g needs; hB is full of k's servers (``policy`` of
    affinity); hC, free, takes one server."""
    hosts = (planner.Host('hA', {'VCPU': 0}, frozenset({'CUSTOM_G'})),
             planner.Host('hB', {'VCPU': 0}, frozenset({'CUSTOM_G'})),
             planner.Host('hC', {'VCPU': 1}))
    need = {'g1': ['CUSTOM_G'], 'g2': ['CUSTOM_G']}
    where = {'g1': 'hA', 'g2': 'hA', 'k1': 'hB', 'k2': 'hB'}
    return planner.Problem(
        hosts, servers(where, need),
        (group('g', ['anti-affinity:host'], ['g1', 'g2']),),
        Topology([], []), kept=(group('k', [policy], ['k1', 'k2']),))


def full_case():
    return _full('soft-affinity:host')


def full_of_hard_case():
    return _full('affinity:host')


def clean_case():
    hosts, topology = cloud(RACKS3)
    where = {'x': 'a1', 'y': 'b1', 'z': 'c1'}
    return planner.Problem(hosts, servers(where), (
        group('g', ['anti-affinity:rack'], where),), topology)


@pytest.mark.parametrize('case, status, moves, temporary, reason', [
    (spread_case, planner.REPAIRED, 1, 0, ''),
    (swap_case, planner.NOT_FOUND, 0, 0, 'stack s: no order of the moves'),
    (swap_with_room_case, planner.REPAIRED, 3, 0, ''),
    (full_case, planner.REPAIRED, 2, 0, ''),
    (full_of_hard_case, planner.IMPOSSIBLE, 0, 0, 'group g: '),
    (impossible_case, planner.IMPOSSIBLE, 0, 0,
     'group g: policies: anti-affinity:rack cannot be met'),
    (capacity_case, planner.IMPOSSIBLE, 0, 0, 'group g: '),
    (traits_case, planner.REPAIRED, 1, 0, ''),
    (clean_case, planner.NOTHING, 0, 0, ''),
])
def test_plans(case, status, moves, temporary, reason):
    problem = case()
    found = planner.plan(problem)
    assert found.status == status, found
    assert len(found.moves) == moves, found.moves
    assert sum(m.temporary for m in found.moves) == temporary
    assert found.reason.startswith(reason), found.reason
    state = replay(problem, found)
    moved = [m.server for m in found.moves]
    assert len(set(moved)) == len(moved)
    if status == planner.REPAIRED:
        assert state.violations(problem.targets + problem.kept) == []
        assert found.before and not found.after
        # planned again where the moves left the servers: nothing to do
        again = dataclasses.replace(problem, hosts=tuple(
            dataclasses.replace(h, free=state.free[h.name])
            for h in problem.hosts), servers={
            s: dataclasses.replace(v, host=state.placed[s])
            for s, v in problem.servers.items()})
        assert planner.plan(again).status == planner.NOTHING
    if status != planner.REPAIRED:
        assert found.moves == () and found.after == found.before


def test_traits_pick_the_host_that_has_them():
    found = planner.plan(traits_case())
    assert [(m.server, m.destination) for m in found.moves] == [
        ('x', 'c2')]


def test_a_server_outside_the_target_makes_room():
    # issue 37: g's two servers must split, the only other host with
    # their trait is full of k's soft-affinity servers: one of k goes to
    # the free host, then g splits
    problem = full_case()
    found = planner.plan(problem)
    (first, second) = found.moves
    assert (first.server[0], first.source, first.destination) == (
        'k', 'hB', 'hC'), found.moves
    assert (second.server[0], second.source, second.destination) == (
        'g', 'hA', 'hB'), found.moves
    # without the bystanders the target's own servers cannot do it
    alone = dataclasses.replace(problem, servers={
        s: v for s, v in problem.servers.items() if s.startswith('g')},
        kept=())
    found = planner.plan(alone)
    assert found.status == planner.IMPOSSIBLE, found
    assert 'anti-affinity:host cannot be met' in found.reason


def test_a_bystanders_hard_policy_is_kept():
    found = planner.plan(full_of_hard_case())
    assert found.reason.endswith(
        'even with other servers moved to make room'), found.reason


def test_never_more_moves_than_greedy():
    # five groups of four on six racks of three hosts; two members of
    # each group share a rack
    racks = {f'r{r}': [f'r{r}h{i}' for i in range(3)] for r in range(6)}
    hosts, topology = cloud(racks, free=1)
    where, targets = {}, []
    for g in range(5):
        members = {f'g{g}m{i}': f'r{(g + i) % 6}h{g % 3}'
                   for i in range(3)}
        members[f'g{g}m3'] = f'r{g % 6}h{(g + 1) % 3}'
        where.update(members)
        targets.append(group(f'g{g}', ['anti-affinity:rack'], members))
    problem = planner.Problem(hosts, servers(where), tuple(targets),
                              topology)
    found = planner.plan(problem)
    baseline = planner.greedy(problem)
    assert found.status == planner.REPAIRED
    assert len(found.moves) <= len(baseline.moves)
    assert collections.Counter(m.server for m in found.moves).most_common(
        1)[0][1] == 1
    replay(problem, found)


def _timed_out(*args, **kwargs):
    return solver.Reassignment(False, {}, reason='no repair found in 0.5 s',
                               timed_out=True)


def test_a_search_out_of_time_falls_back_to_the_baseline(monkeypatch):
    # a time-out proves nothing: the one-at-a-time moves repair it
    monkeypatch.setattr(solver, 'reassign', _timed_out)
    problem = spread_case()
    found = planner.plan(problem)
    assert found.status == planner.REPAIRED, found
    assert not found.optimal
    assert found.moves == planner.greedy(problem).moves
    assert replay(problem, found).violations(problem.targets) == []


def test_out_of_time_and_no_baseline_repair_is_said_so(monkeypatch):
    monkeypatch.setattr(solver, 'reassign', _timed_out)
    found = planner.plan(impossible_case())
    assert found.status == planner.NOT_FOUND and found.moves == ()
    assert found.reason == ('group g: no repair found in 0.5 s, and moving '
                            'one server at a time does not repair it')


def fewest(problem):
    """The fewest moves of any repair of ``problem`` (one component, no
    broken kept group) that can be taken in some order, each server once,
    found by trying every placement and every order: each step fits the
    capacity left and adds no violation to the targets or the moving
    server's own groups, a bystander goes only to a host with room for it
    now, and no kept group ends broken. None when there is none."""
    state = planner._State(problem)
    mine = {s for t in problem.targets for s in t.servers}
    hosts = [h.name for h in problem.hosts]
    names = sorted(problem.servers)
    choices = []
    for sid in names:
        here = state.placed[sid]
        server = problem.servers[sid]
        choices.append([here] + [h for h in hosts if h != here and (
            sid in mine or state.fits(server, h))])
    placements = sorted(itertools.product(*choices), key=lambda placed: sum(
        h != state.placed[s] for s, h in zip(names, placed)))
    for placed in placements:
        wanted = {s: h for s, h in zip(names, placed)
                  if h != state.placed[s]}
        if _ends(problem, wanted) and _ordered(problem, wanted):
            return len(wanted)
    return None


def _ends(problem, wanted):
    """The servers where ``wanted`` puts them end every violation of the
    targets and break no kept group."""
    state = planner._State(problem)
    state.placed.update(wanted)
    return not state.violations(problem.targets) and not state.broken(
        problem.kept)


def _ordered(problem, wanted):
    for order in itertools.permutations(sorted(wanted)):
        state = planner._State(problem)
        for sid in order:
            server = problem.servers[sid]
            if not state.fits(server, wanted[sid]) or not state.safe(
                    server, wanted[sid], planner._targets_of(
                        problem, sid, problem.targets)):
                break
            state.move(server, wanted[sid])
        else:
            return True
    return False


@pytest.mark.parametrize('case', [
    spread_case, swap_with_room_case, full_case, traits_case])
def test_the_fewest_moves_that_can_be_taken(case):
    problem = case()
    found = planner.plan(problem)
    assert found.status == planner.REPAIRED, found
    assert len(found.moves) == fewest(problem), found.moves
    assert found.optimal


def test_a_swap_with_one_bystander_opens_the_full_host_first():
    # issue 48: the swap alone has no order; L, in no group, leaves hA for
    # hC, then a pair joins on hA and the other on hB
    problem = swap_with_room_case()
    found = planner.plan(problem)
    assert found.moves[0] == planner.Move('L', 'hA', 'hC'), found.moves
    state = replay(problem, found)
    assert state.violations(problem.targets) == []
    # without L the same swap stays not found, never a server moved twice
    found = planner.plan(swap_case())
    assert (found.status, found.moves) == (planner.NOT_FOUND, ())
    assert fewest(swap_case()) is None
