"""engine.admission.admit: what the policy service accepts of a group's
policies (the API and the simulator's scenario checks call it)."""

import pytest

from nova_scoped_policies.engine import admission
from nova_scoped_policies import policy
from nova_scoped_policies import topology as topo


def _zones(**settings):
    metadata = dict(policy_scope='zone', **settings)
    return topo.from_aggregates(
        topo.AggregateInfo(f'uuid-{name}', name, hosts, metadata)
        for name, hosts in (('zone-a', ['h1']), ('zone-b', ['h2'])))


@pytest.mark.parametrize('document, field, problem', [
    ({'policies': ['anti-affinity:rack']}, 'policies[0]',
     "unknown scope 'rack'"),
    ({'policies': ['anti-affinity'], 'rules': {'min_domains_rack': 2,
                                               'size': 4}},
     'server_group.rules.min_domains_rack', "unknown scope 'rack'"),
    ({'policies': ['affinity:zone:uuid-zone-a']}, 'policies[0]',
     'does not allow targeting'),
])
def test_refused_naming_the_field(document, field, problem):
    with pytest.raises(policy.PolicyError) as err:
        admission.admit(policy.parse_document(document), _zones(), 'p',
                        'server_group')
    assert err.value.field == field
    assert problem in str(err.value)


def test_admitted_with_real_identifiers():
    topology = _zones(policy_scope_allow_identifiers='true')
    found = admission.admit(policy.parse_document(
        {'policies': ['affinity:zone:uuid-zone-b']}), topology, 'p', '')
    assert [str(p) for p in found.policies] == ['affinity:zone:uuid-zone-b']
