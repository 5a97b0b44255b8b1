"""The RequestSpec -> engine request builder: plain data in, no I/O."""

import dataclasses

from oslo_serialization import jsonutils
from oslo_utils.fixture import uuidsentinel as uuids
import pytest

from nova import objects
from nova_scoped_policies.db import records
from nova_scoped_policies import policy
from nova_scoped_policies.scheduler import request_builder as builder


def test_view_reads_the_spec_without_lazy_loading():
    group = objects.InstanceGroup(uuid=uuids.group, policy='anti-affinity',
                                  rules={'max_server_per_host': '2'},
                                  members=[uuids.m1], hosts=['h1'])
    spec = objects.RequestSpec(
        instance_group=group, instance_uuid=uuids.new, project_id='p',
        scheduler_hints={'scoped_policies': ['{"policies": []}']})
    found = builder.view(spec)
    assert found == builder.SpecView(
        True, uuids.group, 'anti-affinity', {'max_server_per_host': 2},
        None, (uuids.m1,), ('h1',), '{"policies": []}', 'p', uuids.new)
    # nothing set: no group, no hint, no query
    assert builder.view(objects.RequestSpec()) == builder.SpecView()


def _spec(hint=None, **kwargs):
    return builder.SpecView(
        hint=jsonutils.dumps(hint) if hint is not None else None, **kwargs)


@pytest.mark.parametrize('spec, stored, expected, hard_scoped', [
    (_spec(), None, None, False),
    (_spec(in_group=True, nova_policy='anti-affinity'), None,
     ['anti-affinity:host'], False),
    (_spec({'policies': ['anti-affinity:rack']}, in_group=True,
           nova_policy='soft-affinity'), None,
     ['soft-affinity:host', 'anti-affinity:rack'], True),
    (_spec(in_group=True), policy.parse_document(
        {'policies': ['soft-anti-affinity:rack']}),
     ['soft-anti-affinity:rack'], False),
    (_spec({'policies': ['affinity:zone:z1']}), None,
     ['affinity:zone:z1'], True),
])
def test_document_joins_group_store_and_hint(spec, stored, expected,
                                             hard_scoped):
    document = builder.document(spec, stored)
    found = None if document is None else [str(p)
                                           for p in document.policies]
    assert found == expected
    assert builder.hard_scoped(document) is hard_scoped


def test_hint_is_ignored_when_the_deployer_says_so():
    spec = _spec({'policies': ['anti-affinity:rack']}, in_group=True)
    assert builder.document(spec, use_hint=False) is None


def test_untargeted_hint_needs_a_group():
    with pytest.raises(policy.PolicyError, match='need a server group'):
        builder.document(_spec({'policies': ['anti-affinity:rack']}))


def test_members_to_locate_keep_order_once_each():
    spec = _spec(members=('a', 'b'))
    stored = records.GroupRecord('g', 'p', policy.PolicyDocument(),
                                 members=('c', 'd'))
    assert builder.members_to_locate(spec, ['b', 'c'], stored) == [
        'a', 'b', 'c', 'd']


def test_excluded_members_are_not_located():
    """Nova's snapshot and the API database still list an instance taken
    out of the group's scoped policies; it counts for nothing."""
    spec = _spec(members=('a', 'b'))
    stored = records.GroupRecord('g', 'p', policy.PolicyDocument(),
                                 members=('c',), excluded=('b', 'd'))
    assert builder.members_to_locate(spec, ['d', 'e'], stored) == [
        'a', 'e', 'c']


def test_engine_request_takes_the_hosts_chosen_since_the_lookup():
    spec = _spec(hosts=('h1', 'h2', 'h3'), instance_uuid=uuids.new)
    document = policy.parse_document({'policies': ['anti-affinity:rack']})
    request = builder.engine_request(document, None, {'m': 'h1'}, spec, 1)
    assert list(request.in_flight) == ['h2', 'h3']
    assert request.instance_uuid == uuids.new


@pytest.mark.parametrize('filters, weighers, expected', [
    ((), (), set()),
    (('ServerGroupAffinityFilter',), (), {'affinity'}),
    (('ServerGroupAntiAffinityFilter', 'ScopedAntiAffinityFilter'), (),
     {'anti-affinity'}),
    ((), ('nova.scheduler.weights.all_weighers',),
     {'soft-affinity', 'soft-anti-affinity'}),
    ((), ('nova.scheduler.weights.affinity.ServerGroupSoftAffinityWeigher',
          'nova_scoped_policies.scheduler.weights.all_weighers'),
     {'soft-affinity'}),
    ((), ('nova_scoped_policies.scheduler.weights.all_weighers',), set()),
])
def test_nova_enforces(filters, weighers, expected):
    assert builder.nova_enforces(filters, weighers) == expected


def test_a_plain_group_left_to_nova_has_no_document():
    plain = builder.SpecView(in_group=True, nova_policy='anti-affinity',
                             group_name='g')
    assert builder.document(plain, left_to_nova={'anti-affinity'}) is None
    assert builder.document(plain, left_to_nova={'affinity'}) is not None
    hinted = dataclasses.replace(
        plain, hint='{"policies": ["anti-affinity:rack"]}')
    found = builder.document(hinted, left_to_nova={'anti-affinity'})
    assert [str(p) for p in found.policies] == [
        'anti-affinity:host', 'anti-affinity:rack']
    # an ignored hint leaves the group plain
    assert builder.document(hinted, use_hint=False,
                            left_to_nova={'anti-affinity'}) is None
