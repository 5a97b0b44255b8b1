"""What a repair's handlers do beside the planner: the waves of an apply
(moves that run together touch different hosts and different targets,
every target a server is in) and a tenant's reason (nothing real named).
"""

from nova_scoped_policies.api.handlers import repairs
from nova_scoped_policies.api import repairs as reads
from nova_scoped_policies.api import visibility
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.repair import planner
from nova_scoped_policies import topology as topo
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope

SPREAD = parse_document({'policies': ['anti-affinity:host']})


def _problem(*targets):
    return planner.Problem((), {}, targets, Topology())


def test_moves_of_one_target_never_run_together():
    group = planner.Target.group('g', SPREAD, ['a', 'b'])
    moves = [planner.Move('a', 'h1', 'h2'), planner.Move('b', 'h3', 'h4')]
    assert [len(w) for w in repairs._waves(moves, _problem(group), 4)] == [
        1, 1]


def test_a_server_in_a_group_and_a_stack_counts_for_both():
    # s is in group g and stack st; a is in g only: apart
    group = planner.Target.group('g', SPREAD, ['s', 'a'])
    stack = planner.Target.group('st', SPREAD, ['s', 'x'])
    moves = [planner.Move('s', 'h1', 'h2'), planner.Move('a', 'h3', 'h4')]
    for targets in ((group, stack), (stack, group)):
        assert [len(w) for w in repairs._waves(
            moves, _problem(*targets), 4)] == [1, 1]


def test_independent_moves_share_a_wave_up_to_the_most():
    targets = [planner.Target.group(f'g{i}', SPREAD, [f's{i}'])
               for i in range(3)]
    moves = [planner.Move(f's{i}', f'h{i}', f'k{i}') for i in range(3)]
    assert [len(w) for w in repairs._waves(moves, _problem(*targets), 2)] \
        == [2, 1]


def test_a_tenants_reason_names_no_real_host_or_domain():
    topology = topo.build(
        [Scope('rack', allow_identifiers=False)],
        [Domain('agg-1', 'secret-rack-1', 'rack',
                frozenset({'compute-1', 'compute-10'}))])
    hosts = tuple(planner.Host(n, {}) for n in ('compute-1', 'compute-10'))
    read = reads.Read(planner.Problem(hosts, {}, (), topology), {}, {})
    shown = reads.viewed(read, visibility.Viewer(False, 'p'))
    text = repairs._reason('violations left: group g: anti-affinity:rack: '
                           'secret-rack-1 holds 2 of max 1 (compute-10, '
                           'compute-1)', read, shown)
    for real in ('secret-rack-1', 'agg-1', 'compute-1', 'compute-10'):
        assert real not in text, text
    assert text.count(shown.host('compute-1')) == 1
    assert text.count(shown.host('compute-10')) == 1
