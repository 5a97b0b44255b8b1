"""The pure parts of a resilience sweep: its cases and its report."""

import itertools
import math

import pytest

from nova_scoped_policies.simulator import resilience
from nova_scoped_policies.simulator import scenario as sc

NAMES = [f'rack-{i}' for i in range(1, 9)]


@pytest.mark.parametrize('count', [1, 2, 3, 8])
def test_every_combination_without_a_limit(count):
    assert resilience.cases(NAMES, count, None, 0) == list(
        itertools.combinations(NAMES, count))


@pytest.mark.parametrize('count', [1, 2, 3, 5])
def test_unranking_is_itertools_order(count):
    every = list(itertools.combinations(NAMES, count))
    assert [resilience._unrank(NAMES, count, rank)
            for rank in range(len(every))] == every


def test_a_sample_is_distinct_ordered_and_the_same_for_a_seed():
    drawn = resilience.cases(NAMES, 3, 10, 7)
    assert len(set(drawn)) == 10 and drawn == resilience.cases(
        NAMES, 3, 10, 7)
    order = {c: i for i, c in enumerate(itertools.combinations(NAMES, 3))}
    assert [order[c] for c in drawn] == sorted(order[c] for c in drawn)
    assert drawn != resilience.cases(NAMES, 3, 10, 8)


def test_a_sample_of_many_hosts_lists_no_combination():
    names = [f'h{i}' for i in range(50000)]
    drawn = resilience.cases(names, 2, 5, 1)
    assert len(drawn) == 5 and math.comb(50000, 2) > 10 ** 9


def test_a_limit_above_the_combinations_takes_them_all():
    assert resilience.cases(NAMES, 7, 100, 0) == list(
        itertools.combinations(NAMES, 7))


def outcome(domains, unplaced=(), groups=None, soft=None, headroom=None):
    return resilience.Outcome(tuple(domains), list(unplaced), groups or {},
                              {}, soft or {}, headroom)


def test_the_summary_lists_broken_cases_worst_first():
    request = sc.Resilience('rack')
    found = resilience.summary(request, [
        outcome(['rack-10'], ['a-1'], {'a': ['x']}, headroom={'VCPU': 4}),
        outcome(['rack-2'], headroom={'VCPU': 8}),
        outcome(['rack-3'], ['a-2', 'b-1'], {'a': ['y'], 'b': ['z']},
                {'w': 1}, headroom={'VCPU': 2}),
        outcome(['rack-1'], [], {'b': ['v']}, headroom={'VCPU': 6}),
    ], 1.23456)
    assert [c['domains'] for c in found['broken']] == [
        ['rack-3'], ['rack-10'], ['rack-1']]
    assert found['broken'][0] == {'domains': ['rack-3'],
                                  'unplaced': ['a-2', 'b-1'],
                                  'groups': {'a': ['y'], 'b': ['z']},
                                  'soft': {'w': 1}}
    assert (found['cases'], found['survived'], found['seconds']) == (
        4, 1, 1.235)
    assert found['groups'] == {'a': {'broken_in': 2, 'of': 4},
                               'b': {'broken_in': 2, 'of': 4}}
    assert found['headroom']['rack-2'] == {'VCPU': 8}


def test_the_summary_of_n_minus_k_has_no_headroom():
    found = resilience.summary(sc.Resilience('host', 2, 3, 9),
                               [outcome(['h1', 'h2'])], 0.1)
    assert found['headroom'] == {} and found['seed'] == 9
