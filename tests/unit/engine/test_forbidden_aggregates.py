"""trait:X=required aggregate metadata vs the request's required traits."""

import pytest

from nova_scoped_policies.engine import forbidden_aggregates as fa
from nova_scoped_policies import topology as topo


def agg(name, **metadata):
    return topo.AggregateInfo(f'uuid-{name}', name, [], metadata)


AGGS = [agg('win', **{'trait:CUSTOM_WINDOWS_LICENSED': 'required'}),
        agg('gpu', **{'trait:HW_GPU_API_DXVA': 'required',
                      'trait:CUSTOM_GPU': 'required'}),
        agg('plain', availability_zone='az1'),
        agg('rack-1', policy_scope='rack')]


@pytest.mark.parametrize('requested, expected', [
    (set(), ['uuid-gpu', 'uuid-win']),
    ({'CUSTOM_WINDOWS_LICENSED'}, ['uuid-gpu']),
    ({'HW_GPU_API_DXVA'}, ['uuid-gpu', 'uuid-win']),
    ({'HW_GPU_API_DXVA', 'CUSTOM_GPU'}, ['uuid-win']),
    ({'HW_GPU_API_DXVA', 'CUSTOM_GPU', 'CUSTOM_WINDOWS_LICENSED',
      'HW_CPU_X86_AVX2'}, []),
])
def test_forbidden(requested, expected):
    assert fa.index(AGGS).forbidden(requested) == expected


@pytest.mark.parametrize('key, value, problem', [
    ('trait:', 'required', "'' is neither a standard trait"),
    ('trait:HW_NOT_A_TRAIT', 'required', 'is neither a standard trait'),
    ('trait:CUSTOM_lower', 'required', 'is neither a standard trait'),
    ('trait:CUSTOM_', 'required', 'is neither a standard trait'),
    ('trait:CUSTOM_X', 'forbidden', "only 'required' is understood"),
    ('trait:CUSTOM_X', '', "only 'required' is understood"),
])
def test_malformed_metadata_is_reported_and_ignored(key, value, problem):
    index = fa.index([agg('bad', **{key: value})])
    assert index.required == {}
    assert index.forbidden(set()) == []
    (found,) = index.problems
    assert 'aggregate bad (uuid-bad)' in found and problem in found


def test_valid_keys_next_to_a_malformed_one_still_count():
    index = fa.index([agg('mixed', **{'trait:CUSTOM_OK': 'Required',
                                      'trait:nope': 'required'})])
    assert index.required == {'uuid-mixed': frozenset({'CUSTOM_OK'})}
    assert len(index.problems) == 1


@pytest.mark.parametrize('name, valid', [
    ('HW_CPU_X86_AVX2', True), ('COMPUTE_STATUS_DISABLED', True),
    ('CUSTOM_WINDOWS_LICENSED', True), ('CUSTOM_A1_B2', True),
    ('CUSTOM_a', False), ('CUSTOM_', False), ('HW_NOPE', False), ('', False),
])
def test_valid_trait(name, valid):
    assert fa.valid_trait(name) is valid
