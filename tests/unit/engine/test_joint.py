"""Several evaluations of one request as one (a server of a stack)."""

import pytest

from nova_scoped_policies import engine
from nova_scoped_policies.engine import placement_query
from nova_scoped_policies.policy import PolicyType
from tests.unit.engine import test_engine as te


def parts():
    """A rack spread with members in rack-1, and a soft host spread with
    a member on h3: each part with its own members."""
    return [te.evaluate({'policies': ['anti-affinity:rack']},
                        {'a': 'h1'}, instance='me'),
            te.evaluate({'policies': ['soft-anti-affinity:host',
                                      'anti-affinity:host']},
                        {'b': 'h3'}, instance='me')]


def test_a_host_passes_when_it_passes_every_part():
    joint = engine.JointEvaluation(parts())
    # h7 is in no rack, h8 in two
    assert te.passing(joint) == ['h4', 'h5', 'h6']
    assert [r.policy for r in joint.reasons('h3')] == ['anti-affinity:host']
    assert [r.policy for r in joint.reasons('h2')] == ['anti-affinity:rack']
    assert joint.has_checks() and len(joint.checks_for()) == 2
    assert joint.has_checks([PolicyType.ANTI_AFFINITY.value])


def test_weights_add_up_over_the_parts():
    first, second = parts()
    joint = engine.JointEvaluation([first, second])
    kind = PolicyType.SOFT_ANTI_AFFINITY
    assert joint.has_weights(kind)
    assert joint.raw_weight('h3', kind) == second.raw_weight('h3', kind) < 0
    assert joint.raw_weight('h5', kind) == 0
    assert joint.verdict('h3').weights == second.verdict('h3').weights


def test_each_part_keeps_its_own_members():
    joint = engine.JointEvaluation(parts())
    assert [p.context.placed_hosts for p in joint.parts] == [['h1'], ['h3']]
    # constraints fold over the parts: rack-1 is full for the first
    found = placement_query.constraints(joint)
    assert found.forbidden == {'rack-1'}


def test_join_keeps_a_lone_evaluation_and_flattens():
    first, second = parts()
    assert engine.join([None, first]) is first
    assert engine.join([None]) is None
    nested = engine.join([engine.join([first, second]), first])
    assert nested.parts == (first, second, first)
    with pytest.raises(ValueError):
        engine.JointEvaluation([])
