"""Hard scoped policies as member_of constraints, table-driven."""

import pytest

from nova_scoped_policies import engine
from nova_scoped_policies.engine import placement_query
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies import topology as topo

RACKS = {'rack-1': ['h1', 'h2'], 'rack-2': ['h3', 'h4'],
         'rack-3': ['h5', 'h6']}


def constraints(document, placed=()):
    aggs = [topo.AggregateInfo(name, name, hosts, {'policy_scope': 'rack'})
            for name, hosts in RACKS.items()]
    aggs.append(topo.AggregateInfo(
        'zone-a', 'zone-a', ['h1', 'h3'],
        {'policy_scope': 'zone', 'policy_scope_allow_identifiers': 'true'}))
    request = engine.Request(parse_document(document),
                             topo.from_aggregates(aggs),
                             {f'm{i}': h for i, h in enumerate(placed)})
    return placement_query.constraints(engine.Engine().prepare(request))


@pytest.mark.parametrize('document, placed, required, forbidden', [
    # nothing placed, nothing known yet
    ({'policies': ['affinity:rack']}, (), [], set()),
    ({'policies': ['anti-affinity:rack']}, (), [], set()),
    # affinity: the members' rack
    ({'policies': ['affinity:rack']}, ('h3',), [{'rack-2'}], set()),
    ({'policies': ['affinity:rack']}, ('h3', 'h5'), [{'rack-2', 'rack-3'}],
     set()),
    # anti-affinity: full racks
    ({'policies': ['anti-affinity:rack']}, ('h1', 'h3'), [],
     {'rack-1', 'rack-2'}),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 2}}, ('h1', 'h2', 'h3'), [],
     {'rack-1'}),
    # targets
    ({'policies': ['affinity:zone:zone-a']}, (), [{'zone-a'}], set()),
    ({'policies': ['anti-affinity:zone:zone-a']}, (), [], {'zone-a'}),
    # min_domains: used racks may not be reused when it binds
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 3, 'min_domains_rack': 2,
                'size': 2}}, ('h1',), [], {'rack-1'}),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 3, 'min_domains_rack': 2,
                'size': 4}}, ('h1',), [], set()),
    # host scope and soft policies stay with the host filters
    ({'policies': ['anti-affinity:host', 'soft-affinity:rack']},
     ('h1', 'h3'), [], set()),
    ({'policies': ['affinity']}, ('h1',), [], set()),
    # an undefined scope: the host filters reject everything anyway
    ({'policies': ['anti-affinity:switch']}, ('h1',), [], set()),
    # several policies combine
    ({'policies': ['affinity:zone:zone-a', 'anti-affinity:rack']},
     ('h1',), [{'zone-a'}], {'rack-1'}),
])
def test_constraints(document, placed, required, forbidden):
    found = constraints(document, placed)
    assert [set(r) for r in found.required] == required
    assert set(found.forbidden) == forbidden
    assert bool(found) == bool(required or forbidden)
    for line in found.why:
        assert ': in [' in line or ': !in [' in line
