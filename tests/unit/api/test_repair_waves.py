"""The waves of a repair's apply: moves that run together touch
different hosts and different targets, every target a server is in."""

from nova_scoped_policies.api.handlers import repairs
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.repair import planner
from nova_scoped_policies.topology import Topology

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
