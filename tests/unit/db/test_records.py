"""The store's typed records (no database needed)."""

import dataclasses
import datetime

import pytest

from nova_scoped_policies.db import records
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies import topology as topo

BODY = {'uuid': 'u1', 'name': 'zone', 'allow_identifiers': True,
        'obfuscate_identifiers': False, 'obfuscate_namespace_uuid': None,
        'aggregates': ['a1', 'a2'],
        'created_at': '2024-05-01T12:00:00', 'updated_at': None}
"""A scope of the policy API as an admin sees it (microversion 1.0)."""


def test_a_scope_record_from_an_api_body():
    record = records.ScopeRecord.of(BODY)
    assert record == records.ScopeRecord(
        'zone', allow_identifiers=True, aggregates=('a1', 'a2'), uuid='u1',
        created_at=datetime.datetime(2024, 5, 1, 12))
    assert record.parent is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.name = 'rack'


def test_a_record_is_no_mapping():
    record = records.ScopeRecord.of(BODY)
    for dict_style in (lambda: record['name'], lambda: record.get('name'),
                       lambda: 'name' in record, lambda: record.keys(),
                       lambda: record.as_dict()):
        with pytest.raises((TypeError, AttributeError)):
            dict_style()


def test_parsers_take_records():
    made = topo.from_scope_records([records.ScopeRecord.of(BODY)],
                                   {'a1': ['h1']})
    assert made.domains_of('zone', 'h1') == ('a1',)
    assert made.scope('zone').allow_identifiers


def test_a_group_record_carries_its_exclusions():
    body = {'id': 'g', 'project_id': 'p', 'members': ['a'],
            'excluded_members': ['n1']}
    record = records.GroupRecord.of(body, PolicyDocument())
    assert record.excluded == ('n1',)
    # a service older than exclusions has none
    del body['excluded_members']
    assert records.GroupRecord.of(body, PolicyDocument()).excluded == ()
    assert record.counted(['n1', 'a', 'n2']) == ('a', 'n2')
