"""Tenant identifiers are translated once, at the edge."""

import dataclasses
import uuid

import pytest

from nova_scoped_policies import engine
from nova_scoped_policies import identifiers
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies import topology as topo

NS = uuid.UUID('6f72348f-df5d-4e0f-a043-4be92996dbfe')
SETTINGS = {'policy_scope': 'zone', 'policy_scope_allow_identifiers': 'true',
            'policy_scope_obfuscate_identifiers': 'true',
            'policy_scope_namespace': str(NS)}
TOPOLOGY = topo.from_aggregates([
    topo.AggregateInfo('uuid-a', 'zone-a', ['h1', 'h2'], SETTINGS),
    topo.AggregateInfo('uuid-b', 'zone-b', ['h3'], SETTINGS)])
MINE = topo.obfuscate(NS, 'tenant-a', 'uuid-b')


def test_engine_request_carries_no_tenant():
    fields = {f.name for f in dataclasses.fields(engine.Request)}
    assert 'project_id' not in fields


def test_to_real_resolves_and_reasons_keep_the_tenants_form():
    doc = identifiers.to_real(
        parse_document({'policies': [f'affinity:zone:{MINE}']}), TOPOLOGY,
        'tenant-a')
    assert [str(p) for p in doc.policies] == ['affinity:zone:uuid-b']
    ev = engine.Engine().prepare(engine.Request(doc, TOPOLOGY))
    reason, = ev.reasons('h1')
    assert reason.policy == f'affinity:zone:{MINE}'
    assert 'uuid-b' not in reason.message
    assert not ev.reasons('h3')
    back = identifiers.to_tenant(doc, TOPOLOGY, 'tenant-a')
    assert [str(p) for p in back.policies] == [f'affinity:zone:{MINE}']


def test_to_real_error_names_the_field_and_the_written_identifier():
    with pytest.raises(PolicyError) as err:
        identifiers.to_real(parse_document(
            {'policies': ['soft-affinity:rack', f'affinity:zone:{MINE}']}),
            TOPOLOGY, 'tenant-b')
    assert err.value.field == 'policies[1]'
    assert MINE in str(err.value)


def test_undefined_scopes_are_left_to_the_engine():
    doc = parse_document({'policies': ['affinity:rack:r1']})
    assert identifiers.to_real(doc, TOPOLOGY, 'tenant-a') == doc


def test_worded_keeps_real_ids_and_learns_the_tenants_form():
    real = parse_document({'policies': ['affinity:zone:uuid-b',
                                        'anti-affinity:rack']})
    doc = identifiers.worded(real, TOPOLOGY, 'tenant-a')
    assert doc == real
    assert [doc.label_of(i) for i in range(2)] == [
        f'affinity:zone:{MINE}', 'anti-affinity:rack']
