"""Joint decisions: constraints, objective, explanations and class merging."""

import collections
import random
import time

import pytest

from nova_scoped_policies.stacks.deadline import Deadline
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope


def make_world(racks, free, traits=lambda r, i: frozenset(), servers=None,
               server_groups=None):
    """``racks`` is a list of host counts; ``free(r, i)`` a host's free
    resources."""
    hosts, domains = [], []
    for r, count in enumerate(racks):
        names = [f'r{r}h{i}' for i in range(count)]
        domains.append(Domain(f'rack-{r}', f'rack{r}', 'rack',
                              frozenset(names)))
        hosts.extend(solver.HostState(n, f'rp-{n}', free(r, i), traits(r, i))
                     for i, n in enumerate(names))
    return solver.World(tuple(hosts), Topology([Scope('rack')], domains),
                        servers or {}, server_groups or {})


def leaf(name, count, vcpu, policies=(), **extra):
    group = {'name': name, 'servers': {'count': count, 'flavor': {
        'resources': {'VCPU': vcpu}}}}
    if policies:
        group['policies'] = list(policies)
    group.update(extra)
    return group


def stack(group, relationships=()):
    return model.parse({'stack': {'name': 's', 'group': group,
                                  'relationships': list(relationships)}})


def rack(host):
    return host.split('h')[0]


def test_joint_decision_fits_where_one_at_a_time_fails():
    # rack 0: 8 empty hosts; racks 1-3: four hosts with 48 VCPU free each
    world = make_world([8, 8, 8, 8], lambda r, i: {
        'VCPU': 48 if r == 0 or i < 4 else 0})
    decision = solver.decide(stack({'name': 'root', 'members': [
        leaf('a', 4, 24, ['anti-affinity:host']),
        leaf('b', 6, 48, ['anti-affinity:host', 'affinity:rack'])]}),
        world)
    assert decision.feasible and decision.optimal
    hosts = decision.assignments
    b = [hosts[f'b-{i}'] for i in range(1, 7)]
    a = [hosts[f'a-{i}'] for i in range(1, 5)]
    assert len({rack(h) for h in b}) == 1 and len(set(b)) == 6
    assert len(set(a)) == 4 and not set(a) & set(b)


def test_spec_use_case_three_clusters_llmn_apart_by_rack():
    world = make_world([4] * 8, lambda r, i: {'VCPU': 16})
    decision = solver.decide(stack({
        'name': 'root', 'policies': ['anti-affinity:rack'],
        'members': [leaf(f'c{c}', 4, 4, llmn={
            'level1': 'rack', 'level2': 'host', 'n': 2})
            for c in range(3)]}), world)
    assert decision.feasible
    racks_of = collections.defaultdict(set)
    for server, host in decision.assignments.items():
        racks_of[server.split('-')[0]].add(rack(host))
        cluster = [h for s, h in decision.assignments.items()
                   if s.split('-')[0] == server.split('-')[0]]
        assert len(set(cluster)) == 4                       # host level
        assert max(collections.Counter(map(rack, cluster)).values()) <= 2
    assert all(len(r) >= 2 for r in racks_of.values())      # N = 2
    assert not (racks_of['c0'] & racks_of['c1'] or racks_of['c0'] &
                racks_of['c2'] or racks_of['c1'] & racks_of['c2'])


def test_across_members_only_never_within():
    # two racks of two hosts: each member group fills one rack
    world = make_world([2, 2], lambda r, i: {'VCPU': 8})
    decision = solver.decide(stack({
        'name': 'root', 'policies': ['anti-affinity:rack'],
        'members': [leaf('a', 2, 8), leaf('b', 2, 8)]}), world)
    assert decision.feasible
    hosts = decision.assignments
    assert rack(hosts['a-1']) == rack(hosts['a-2']) != rack(hosts['b-1'])
    # with max_server_per_rack on the group of groups the subtree counts
    decision = solver.decide(stack({
        'name': 'root', 'policies': ['anti-affinity:rack'],
        'rules': {'max_server_per_rack': 1},
        'members': [leaf('a', 2, 1), leaf('b', 1, 1)]}), world)
    assert not decision.feasible
    assert decision.reason == ('stack.group: anti-affinity:rack cannot be '
                               'met with the capacity left')


def test_relationships_with_groups_and_existing_servers():
    world = make_world([2, 2, 2], lambda r, i: {'VCPU': 8},
                       servers={'11111111-2222-3333-4444-555555555555':
                                'r1h0'},
                       server_groups={'66666666-2222-3333-4444-555555555555':
                                      ('r2h0', 'r2h1')})
    decision = solver.decide(stack(
        {'name': 'root', 'members': [leaf('web', 2, 4), leaf('db', 1, 4)]},
        [{'from': 'web', 'to': 'db', 'policies': ['affinity:rack']},
         {'from': 'web', 'to': {
             'server_group': '66666666-2222-3333-4444-555555555555'},
          'policies': ['anti-affinity:rack']},
         {'from': 'db', 'to': {
             'server': '11111111-2222-3333-4444-555555555555'},
          'policies': ['affinity:rack']}]), world)
    assert decision.feasible
    assert {rack(h) for h in decision.assignments.values()} == {'r1'}
    with pytest.raises(model.StackError) as caught:
        solver.decide(stack(
            {'name': 'root', 'members': [leaf('web', 1, 4)]},
            [{'from': 'web', 'to': {
                'server': '00000000-2222-3333-4444-555555555555'},
              'policies': ['anti-affinity:host']}]), world)
    assert caught.value.field == 'stack.relationships[0].to.server'


def test_traits_and_every_resource_class():
    world = make_world([2, 2], lambda r, i: {'VCPU': 8, 'CUSTOM_GPU': r},
                       traits=lambda r, i: frozenset(
                           {'CUSTOM_SSD'} if i == 0 else ()))
    group = leaf('g', 1, 1)
    group['servers']['flavor'] = {
        'resources': {'VCPU': 1, 'CUSTOM_GPU': 1},
        'traits': {'required': ['CUSTOM_SSD']}}
    decision = solver.decide(stack(group), world)
    assert decision.assignments == {'g-1': 'r1h0'}
    group['servers']['count'] = 2
    decision = solver.decide(stack(group), world)
    assert not decision.feasible
    assert 'CUSTOM_GPU' in decision.reason


def test_explanations_name_the_resource_or_the_policy():
    world = make_world([2, 2], lambda r, i: {'VCPU': 8})
    decision = solver.decide(stack(leaf('g', 1, 40)), world)
    assert decision.reason == ('stack.group.servers.flavor: no host has '
                               'VCPU 40 free')
    decision = solver.decide(stack(leaf('g', 5, 8)), world)
    assert decision.reason == 'the stack needs 40 VCPU; not that much is free'
    decision = solver.decide(stack(leaf('g', 3, 2, ['anti-affinity:rack'])),
                             world)
    assert decision.reason == ('stack.group: anti-affinity:rack cannot be '
                               'met with the capacity left')
    assert not decision.assignments


def test_soft_policies_are_the_objective():
    world = make_world([3, 3], lambda r, i: {'VCPU': 8})
    decision = solver.decide(stack(leaf('g', 3, 2, [
        'soft-anti-affinity:host'])), world)
    assert decision.cost == 0 and len(set(decision.assignments.values())) == 3
    decision = solver.decide(stack(leaf('g', 3, 2, ['soft-affinity:rack'])),
                             world)
    assert decision.cost == 1
    assert len({rack(h) for h in decision.assignments.values()}) == 1


def test_replay_refuses_a_decision_that_breaks_a_policy():
    world = make_world([2], lambda r, i: {'VCPU': 8})
    s = stack(leaf('g', 2, 1, ['anti-affinity:host']))
    clauses = solver.compile_stack(s, world)
    with pytest.raises(solver.DecisionError, match='g-2 on r0h0'):
        solver.replay(s, world, clauses, {'g-1': 'r0h0', 'g-2': 'r0h0'})
    crowded = stack(leaf('h', 2, 5))
    with pytest.raises(solver.DecisionError, match='r0h0 is over capacity'):
        solver.replay(crowded, world, [], {'h-1': 'r0h0', 'h-2': 'r0h0'})


@pytest.mark.parametrize('first', [True, False])
def test_spread_counts_only_racks_that_can_take_a_server(first, monkeypatch):
    """Rack 2's hosts have no room: its domain is not eligible, so 2/1/0
    keeps spread:rack's skew (Kubernetes' eligible domains), in the
    solver's model, in the one-at-a-time decision and in the replay."""
    world = make_world([2, 2, 2], lambda r, i: {'VCPU': 0 if r == 2 else 8})
    if not first:   # the solver's decision alone, replayed
        monkeypatch.setattr(solver, 'one_at_a_time', lambda *a, **k: None)
    decision = solver.decide(stack(leaf('g', 3, 1, ['spread:rack'])), world)
    assert decision.feasible, decision.reason
    racks = collections.Counter(rack(h)
                                for h in decision.assignments.values())
    assert sorted(racks.values()) == [1, 2] and 'r2' not in racks


def test_soft_spread_keeps_servers_off_hosts_in_no_rack():
    """A host in no rack is no domain of its own: a server there costs as
    skew does, so 2/2 over the racks is the best decision (Kubernetes
    scores a node without the topology key lowest)."""
    racked = make_world([2, 2], lambda r, i: {'VCPU': 2})
    world = solver.World(
        racked.hosts + (solver.HostState('loose', 'rp-loose',
                                         {'VCPU': 64}, frozenset()),),
        racked.topology, {}, {})
    decision = solver.decide(stack(leaf('g', 4, 1, ['soft-spread:rack'])),
                             world, workers=1)
    assert decision.feasible and decision.optimal, decision.reason
    assert 'loose' not in decision.assignments.values()
    assert decision.cost == 0


POLICIES = ['anti-affinity:host', 'anti-affinity:rack', 'affinity:rack',
            'soft-anti-affinity:host', 'soft-affinity:rack',
            'soft-anti-affinity:rack']


def _random_case(rng):
    racks = [rng.randint(1, 4) for _ in range(rng.randint(2, 4))]
    sizes = {}

    def free(r, i):
        return sizes.setdefault((r, i), {'VCPU': rng.choice([0, 4, 8, 8, 16]),
                                         'MEMORY_MB': rng.choice([4, 8])})
    world = make_world(racks, free, traits=lambda r, i: frozenset(
        ['CUSTOM_SSD'] if rng.random() < 0.5 else []))
    members = []
    for g in range(rng.randint(1, 3)):
        group = leaf(f'g{g}', rng.randint(1, 3), rng.choice([2, 4, 8]),
                     rng.sample(POLICIES[:3], rng.randint(0, 1)) +
                     rng.sample(POLICIES[3:], rng.randint(0, 1)))
        group['servers']['flavor']['resources']['MEMORY_MB'] = rng.choice(
            [2, 4])
        if rng.random() < 0.3:
            group['servers']['flavor']['traits'] = {
                'required': ['CUSTOM_SSD']}
        members.append(group)
    root = {'name': 'root', 'members': members}
    if rng.random() < 0.5:
        root['policies'] = [rng.choice(POLICIES)]
    try:
        return world, model.parse({'stack': {'name': 's', 'group': root}})
    except model.StackError:  # contradictory policies: draw again
        return _random_case(rng)


@pytest.mark.parametrize('seed', range(60))
def test_merging_hosts_into_classes_changes_nothing(seed):
    world, s = _random_case(random.Random(seed))
    merged = solver.decide(s, world, merge=True, search=True)
    per_host = solver.decide(s, world, merge=False, search=True)
    assert merged.feasible == per_host.feasible
    if merged.feasible:
        assert merged.optimal and per_host.optimal
        assert merged.cost == per_host.cost


@pytest.mark.parametrize('seed', range(60))
def test_one_at_a_time_by_domain_chooses_as_host_by_host(seed, monkeypatch):
    """The first decision reads only the hosts of the domains a check by
    domain passes: it places every server where reading every host in
    nova's order would, packed or not."""
    world, s = _random_case(random.Random(seed))
    clauses = solver.compile_stack(s, world)
    by_domain = [solver.one_at_a_time(s, world, clauses, packed=packed)
                 for packed in (None, 'rack')]

    def every_host(checks, order, used, fits, room, domain_orders):
        return next((h for h in order if h not in used and fits(h)), None)
    monkeypatch.setattr(solver, '_roomiest_unused', every_host)
    assert by_domain == [solver.one_at_a_time(s, world, clauses,
                                              packed=packed)
                         for packed in (None, 'rack')]


def test_a_leaf_targets_a_domain_by_the_tenants_own_id():
    import uuid as uuidlib
    from nova_scoped_policies import topology as topo
    namespace = uuidlib.UUID('6f72348f-df5d-4e0f-a043-4be92996dbfe')
    base_world = make_world([2, 2], lambda r, i: {'VCPU': 8})
    topology = Topology(
        [Scope('rack', allow_identifiers=True, obfuscate_identifiers=True,
               namespace=namespace)],
        [base_world.topology.domain(f'rack-{r}') for r in (0, 1)])
    world = solver.World(base_world.hosts, topology)
    mine = topo.obfuscate(namespace, 'tenant-a', 'rack-1')
    s = stack(leaf('g', 2, 1, [f'affinity:rack:{mine}']))
    real = model.with_real_ids(s, topology, 'tenant-a')
    assert real.root.document.policies[0].identifier == 'rack-1'
    decision = solver.decide(real, world)
    assert {rack(h) for h in decision.assignments.values()} == {'r1'}
    from nova_scoped_policies.policy import PolicyError
    with pytest.raises(PolicyError):
        model.with_real_ids(s, topology, 'tenant-b')


def test_a_stack_without_soft_policies_takes_its_first_decision(monkeypatch):
    """Nothing to optimise: the one-at-a-time decision, which meets every
    hard policy, is the answer without CP-SAT (the model, the search and
    OR-Tools' import are left out)."""
    def no_solver():
        raise AssertionError('CP-SAT asked')
    monkeypatch.setattr(solver, '_cp_model', no_solver)
    world = make_world([3, 3], lambda r, i: {'VCPU': 8})
    decision = solver.decide(stack({'name': 'root', 'policies': [
        'anti-affinity:rack'], 'members': [
        leaf('a', 2, 4, ['anti-affinity:host']), leaf('b', 2, 4)]}), world)
    assert decision.feasible and decision.optimal and decision.cost == 0
    racks = {g: {rack(h) for s, h in decision.assignments.items()
                 if s.startswith(g)} for g in 'ab'}
    assert not racks['a'] & racks['b']
    assert decision.assignments['a-1'] != decision.assignments['a-2']


def test_a_model_that_cannot_be_built_in_time_is_not_built(monkeypatch):
    """The first servers' variables say the model would end past its
    deadline: it is not built, and the first decision, checked, is the
    answer (its soft policies not optimised)."""
    monkeypatch.setattr(solver, 'BUILD_FACTOR', 1e9)
    # the roomiest hosts alternate between the racks
    world = make_world([5, 5], lambda r, i: {'VCPU': 8 + 2 * i + r})
    decision = solver.decide(stack(leaf('g', 8, 2, [
        'soft-affinity:rack', 'anti-affinity:host'])), world)
    assert decision.feasible and not decision.optimal
    assert len(set(decision.assignments.values())) == 8
    # weighed by soft-affinity:rack, as nova's weigher would: one rack
    # filled first (roomiest first alone would put 4 in each)
    racks = collections.Counter(rack(h)
                                for h in decision.assignments.values())
    assert sorted(racks.values()) == [3, 5]
    assert decision.stop == solver.LIMIT
    # without a first decision, no model in time is no decision in time
    monkeypatch.setattr(solver, 'one_at_a_time', lambda *a, **k: None)
    decision = solver.decide(stack(leaf('g', 8, 2, [
        'soft-affinity:rack', 'anti-affinity:host'])), world, time_limit=3)
    assert not decision.feasible and decision.timed_out
    assert decision.stop == solver.LIMIT
    assert decision.reason == ('not found within the limit: may still fit '
                               '(3 s)')


def test_a_refusal_explained_within_the_deadline():
    """Past the deadline, the explanation of an infeasible stack says it
    does not fit without naming the policy (it would take more models)."""
    world = make_world([2, 2], lambda r, i: {'VCPU': 8})
    s = stack(leaf('g', 3, 2, ['anti-affinity:rack']))
    clauses = solver.compile_stack(s, world)
    rcs = ['VCPU']
    cp_model = solver._cp_model()
    slots = solver._classes(s, world, clauses, rcs, True)
    reason = solver._explain(cp_model, s, world, clauses, slots, rcs, 10.0,
                             1, 0, deadline=0.0)
    assert reason.startswith('the servers do not fit in the capacity left '
                             'with their hard policies')


def test_groups_fill_their_racks_when_the_roomiest_first_fails(
        monkeypatch):
    """Roomiest first, group a takes racks 0 and 1, b rack 2, and c finds
    none; the second try fills the racks a group holds first (a in rack
    0, b in rack 1, c in rack 2): no search needed."""
    def no_solver():
        raise AssertionError('CP-SAT asked')
    monkeypatch.setattr(solver, '_cp_model', no_solver)
    rooms = {(0, 0): 16, (0, 1): 10, (1, 0): 15, (1, 1): 9, (2, 0): 14,
             (2, 1): 8}
    world = make_world([2, 2, 2], lambda r, i: {'VCPU': rooms[r, i]})
    s = stack({'name': 'root', 'policies': ['anti-affinity:rack'],
               'members': [leaf(g, 2, 4) for g in 'abc']})
    assert solver.one_at_a_time(s, world, solver.compile_stack(
        s, world)) is None
    decision = solver.decide(s, world)
    assert decision.feasible, decision.reason
    racks = {g: {rack(h) for n, h in decision.assignments.items()
                 if n.startswith(g)} for g in 'abc'}
    assert racks == {'a': {'r0'}, 'b': {'r1'}, 'c': {'r2'}}


def _spy_solve(monkeypatch):
    """Record, per CP-SAT search: (the model has an objective, the
    parameters the search ran with)."""
    asked = []
    real = solver._solve

    def spy(cp_model, built, *args, **kwargs):
        found, status = real(cp_model, built, *args, **kwargs)
        asked.append((built.m.HasObjective(), found.parameters))
        return found, status
    monkeypatch.setattr(solver, '_solve', spy)
    return asked


def test_a_search_with_no_soft_term_stops_at_its_first_decision(
        monkeypatch):
    """One at a time finds nothing, so CP-SAT searches; with no objective
    every decision that meets the hard policies is as good: the search
    stops at its first (``stop_after_first_solution``), and the decision
    says there was nothing to improve."""
    monkeypatch.setattr(solver, 'one_at_a_time', lambda *a, **k: None)
    asked = _spy_solve(monkeypatch)
    world = make_world([3, 3], lambda r, i: {'VCPU': 8})
    decision = solver.decide(stack({'name': 'root', 'policies': [
        'anti-affinity:rack'], 'members': [
        leaf('a', 2, 4, ['anti-affinity:host']), leaf('b', 2, 4)]}), world,
        gap=0.5)
    assert decision.feasible and decision.optimal
    assert decision.stop == solver.FIRST
    [(objective, parameters)] = asked
    assert not objective and parameters.stop_after_first_solution
    assert parameters.relative_gap_limit == 0


def test_a_search_with_soft_terms_runs_to_its_gap(monkeypatch):
    """Soft policies are an objective: the search is not stopped at its
    first decision but within the relative gap (or at a proven optimum,
    or the limit)."""
    asked = _spy_solve(monkeypatch)
    world = make_world([3, 3], lambda r, i: {'VCPU': 8})
    decision = solver.decide(stack(leaf('g', 3, 2, ['soft-affinity:rack'])),
                             world, gap=0.25)
    [(objective, parameters)] = asked
    assert objective and not parameters.stop_after_first_solution
    assert parameters.relative_gap_limit == 0.25
    assert decision.stop in (solver.OPTIMAL, solver.GAP)
    assert decision.optimal == (decision.stop == solver.OPTIMAL)


class _Found:
    """What :func:`solver._stopped` reads of a CP-SAT search."""

    def __init__(self, value, bound):
        self.value, self.bound = value, bound

    def ObjectiveValue(self):
        return self.value

    def BestObjectiveBound(self):
        return self.bound


@pytest.mark.parametrize('value, bound, status, gap, stop', [
    (10, 10, 'OPTIMAL', 0.0, solver.OPTIMAL),
    (10, 9.5, 'FEASIBLE', 0.0, solver.OPTIMAL),      # integer costs
    (10, 9, 'OPTIMAL', 0.1, solver.GAP),            # CP-SAT at its gap
    (10, 9, 'FEASIBLE', 0.1, solver.GAP),
    (10, 5, 'FEASIBLE', 0.1, solver.LIMIT),
    (10, 9, 'FEASIBLE', 0.0, solver.LIMIT),
])
def test_why_a_search_stopped(value, bound, status, gap, stop):
    cp_model = solver._cp_model()
    built = type('Built', (), {'cost': [1]})()
    assert solver._stopped(cp_model, _Found(value, bound),
                           getattr(cp_model, status), built, gap) == stop
    built.cost = []
    assert solver._stopped(cp_model, _Found(value, bound),
                           getattr(cp_model, status), built,
                           gap) == solver.FIRST


def test_a_past_deadline_answers_not_found_without_deciding(monkeypatch):
    """The request spent its limit before the decision (reading the
    cloud): no decision is tried, and the answer is "not found within the
    limit", never a refusal."""
    def no(*args, **kwargs):
        raise AssertionError('decided past the deadline')
    monkeypatch.setattr(solver, 'one_at_a_time', no)
    world = make_world([2], lambda r, i: {'VCPU': 8})
    decision = solver.decide(stack(leaf('g', 1, 1)), world,
                             deadline=Deadline.wall(5.0, time.monotonic()
                                                    - 6.0))
    assert not decision.feasible and decision.timed_out
    assert decision.stop == solver.LIMIT
    assert decision.reason.startswith(
        'not found within the limit: may still fit (5 s; ')


def test_the_solver_has_what_is_left_of_the_deadline(monkeypatch):
    """Every phase ends by the caller's deadline, not by a limit that
    starts when the solver is called."""
    seen = []
    real = solver.one_at_a_time

    def spy(stack, world, clauses, deadline=None, *args, **kwargs):
        seen.append(deadline)
        return real(stack, world, clauses, deadline, *args, **kwargs)
    monkeypatch.setattr(solver, 'one_at_a_time', spy)
    world = make_world([2, 2], lambda r, i: {'VCPU': 8})
    deadline = Deadline.wall(600.0, time.monotonic() - 300.0)
    decision = solver.decide(stack(leaf('g', 2, 1, ['anti-affinity:rack'])),
                             world, deadline=deadline)
    assert decision.feasible and decision.stop == solver.FIRST
    assert seen and all(d is not None and d <= deadline.at for d in seen)


def test_deterministic_work_reads_no_clock_and_decides_alike(monkeypatch):
    """The simulator's limit: CP-SAT's deterministic time with one worker
    whatever the workers asked, no wall-time deadline for any phase;
    the same inputs, the same decision."""
    firsts = []
    real = solver.one_at_a_time

    def spy(stack, world, clauses, deadline=None, weigh_until=None,
            *args, **kwargs):
        firsts.append((deadline, weigh_until))
        return real(stack, world, clauses, deadline, weigh_until, *args,
                    **kwargs)
    monkeypatch.setattr(solver, 'one_at_a_time', spy)
    asked = _spy_solve(monkeypatch)
    world = make_world([4, 4, 4], lambda r, i: {'VCPU': 8 + i % 3})
    s = stack({'name': 'root', 'policies': ['soft-anti-affinity:rack'],
               'members': [leaf('a', 3, 2, ['soft-affinity:rack']),
                           leaf('b', 3, 3, ['anti-affinity:host'])]})
    decisions = [solver.decide(s, world, workers=4,
                               deadline=Deadline.work(2.0))
                 for _ in range(2)]
    assert decisions[0].assignments == decisions[1].assignments
    assert decisions[0].cost == decisions[1].cost
    assert set(firsts) == {(None, None)}
    assert asked
    for _, parameters in asked:
        assert parameters.max_deterministic_time == 2.0
        assert parameters.num_workers == 1
        assert parameters.max_time_in_seconds > 1e9     # not set


def test_a_hint_uses_the_first_slots_of_each_class():
    """Alike hosts are one class whose slots the model uses in order (and
    hosts beyond what the stack can use are dropped): a first decision on
    other hosts of the class is hinted on its first slots (the same
    decision up to interchangeable hosts), so the hint meets the
    symmetry breaking; a smaller host takes a slot of a bigger class in
    its domains."""
    world = make_world([5], lambda r, i: {'VCPU': 6 if i == 4 else 8})
    s = stack(leaf('g', 3, 2, ['anti-affinity:host']))
    clauses = solver.compile_stack(s, world)
    stand_in = {}
    slots = solver._classes(s, world, clauses, ['VCPU'], True,
                            stand_in=stand_in)
    assert [slot.host for slot in slots] == ['r0h0', 'r0h1', 'r0h2']
    assert set(stand_in) == {'r0h3', 'r0h4'}
    first = {'g-1': 'r0h3', 'g-2': 'r0h4', 'g-3': 'r0h0'}
    at = solver._canonical(first, slots, stand_in)
    assert {h: slots[ti].host for h, ti in at.items()} == {
        'r0h3': 'r0h0', 'r0h4': 'r0h1', 'r0h0': 'r0h2'}


def test_the_cost_of_a_decision_is_the_objective():
    world = make_world([3, 3], lambda r, i: {'VCPU': 8})
    s = stack(leaf('g', 3, 2, ['soft-affinity:rack']))
    decision = solver.decide(s, world)
    assert solver.cost_of(s, world, decision.assignments) == \
        decision.cost == 1
    assert solver.cost_of(s, world, {'g-1': 'r0h0', 'g-2': 'r1h0',
                                     'g-3': 'r1h1'}) == 2
    assert solver.cost_of(stack(leaf('h', 1, 1)), world,
                          {'h-1': 'r0h0'}) == 0
