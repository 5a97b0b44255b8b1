"""The audit of placements against a group's policies, table-driven."""

import pytest

from nova_scoped_policies.engine import audit
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies import topology as topo

TOPOLOGY = topo.from_aggregates(
    [topo.AggregateInfo(n, n, hosts, {'policy_scope': 'rack'})
     for n, hosts in (('rack-1', ['h1', 'h2']), ('rack-2', ['h3', 'h4']))]
    + [topo.AggregateInfo('zone-a', 'zone-a', ['h1', 'h2', 'h3'], {
        'policy_scope': 'zone', 'policy_scope_allow_identifiers': 'true'})])


@pytest.mark.parametrize('document, placements, violations', [
    ({'policies': ['anti-affinity:rack']}, {'a': 'h1', 'b': 'h3'}, []),
    ({'policies': ['anti-affinity:rack']}, {'a': 'h1', 'b': 'h2'},
     ['anti-affinity:rack: rack-1 holds 2 of max 1 (a, b)']),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 2}}, {'a': 'h1', 'b': 'h2'}, []),
    ({'policies': ['anti-affinity']}, {'a': 'h1', 'b': 'h1', 'c': None},
     ['anti-affinity:host: h1 holds 2 of max 1 (a, b)']),
    ({'policies': ['affinity:rack']}, {'a': 'h1', 'b': 'h3'},
     ['affinity:rack: members are in 2 domains (rack-1, rack-2)']),
    ({'policies': ['affinity:rack']}, {'a': 'h1', 'b': 'h9'},
     ['affinity:rack: b runs on h9, in no domain of scope rack']),
    ({'policies': ['affinity:zone:zone-a']}, {'a': 'h1', 'b': 'h4'},
     ['affinity:zone:zone-a: b runs on h4, in no domain of scope zone',
      'affinity:zone:zone-a: b not in zone-a']),
    ({'policies': ['anti-affinity:zone:zone-a']}, {'a': 'h1', 'b': 'h4'},
     ['anti-affinity:zone:zone-a: b runs on h4, in no domain of scope zone',
      'anti-affinity:zone:zone-a: a in excluded zone-a']),
    ({'policies': ['anti-affinity:switch']}, {'a': 'h1'},
     ['anti-affinity:switch: scope switch is not defined']),
    ({'policies': ['soft-anti-affinity:rack']}, {'a': 'h1', 'b': 'h1'}, []),
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
      'rules': {'size': 2}}, {'a': 'h1', 'b': 'h2'},
     ['anti-affinity:rack: rack-1 holds 2 of max 1 (a, b)',
      'min_domains_rack: 2 members use 1 domain(s) of 2']),
    # min_domains is judged once the group has its size
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
      'rules': {'size': 3}}, {'a': 'h1'}, []),
])
def test_violations(document, placements, violations):
    found = audit.audit(parse_document(document), TOPOLOGY, placements)
    assert list(found.violations) == violations


def test_members_and_domains_per_scope():
    found = audit.audit(parse_document({
        'policies': ['anti-affinity:rack', 'soft-affinity:zone']}),
        TOPOLOGY, {'b': 'h4', 'a': 'h1', 'c': None})
    assert [(m.member, m.host, dict(m.domains)) for m in found.members] == [
        ('a', 'h1', {'rack': 'rack-1', 'zone': 'zone-a'}),
        ('b', 'h4', {'rack': 'rack-2', 'zone': None}),
        ('c', None, {'rack': None, 'zone': None})]
