"""Table-driven tests of the topology built from host aggregates."""

import uuid

import pytest

from nova_scoped_policies.db import records
from nova_scoped_policies import topology as topo
from nova_scoped_policies.policy import PolicyError

NS = uuid.UUID('6f72348f-df5d-4e0f-a043-4be92996dbfe')


def agg(name, hosts, **metadata):
    return topo.AggregateInfo(f'uuid-{name}', name, hosts, metadata)


RACKS = [agg('rack-1', ['h1', 'h2'], policy_scope='rack'),
         agg('rack-2', ['h3'], policy_scope='rack'),
         agg('az1', ['h1', 'h2', 'h3'], availability_zone='az1')]


@pytest.mark.parametrize('scope, host, expected', [
    ('rack', 'h1', ('uuid-rack-1',)),
    ('rack', 'h3', ('uuid-rack-2',)),
    ('rack', 'h9', ()),
    ('host', 'h9', ('h9',)),
    ('switch', 'h1', ()),
])
def test_domains_of(scope, host, expected):
    assert topo.from_aggregates(RACKS).domains_of(scope, host) == expected


def test_aggregates_without_scope_are_not_domains():
    topology = topo.from_aggregates(RACKS)
    assert topology.scope_names == ['host', 'rack']
    assert [d.name for d in topology.domains('rack')] == ['rack-1', 'rack-2']
    assert topology.problems == []


def test_host_in_two_domains_of_one_scope_is_reported_not_fatal():
    topology = topo.from_aggregates(
        RACKS + [agg('rack-3', ['h2', 'h4'], policy_scope='rack')])
    assert topology.domains_of('rack', 'h2') == ('uuid-rack-1',
                                                 'uuid-rack-3')
    assert topology.domains_of('rack', 'h4') == ('uuid-rack-3',)
    assert topology.problems == [
        'host h2 is in 2 domains of scope rack (rack-1, rack-3); '
        'a host may be in at most one']


def test_host_in_two_scopes_is_fine():
    topology = topo.from_aggregates(
        RACKS + [agg('sw-1', ['h1', 'h3'], policy_scope='switch')])
    assert topology.domains_of('switch', 'h1') == ('uuid-sw-1',)
    assert topology.domains_of('rack', 'h1') == ('uuid-rack-1',)
    assert topology.problems == []


@pytest.mark.parametrize('metadata, problem', [
    ({'policy_scope': 'host'}, "'host' is the implicit scope"),
    ({'policy_scope': 'bad scope'}, 'a scope name is'),
    ({'policy_scope': ''}, 'a scope name is'),
])
def test_bad_scope_metadata_is_ignored_and_reported(metadata, problem):
    topology = topo.from_aggregates([agg('x', ['h1'], **metadata)])
    assert topology.scope_names == ['host']
    assert len(topology.problems) == 1
    assert problem in topology.problems[0]


@pytest.mark.parametrize('metadata, expected', [
    ({}, topo.Scope('zone')),
    ({'policy_scope_allow_identifiers': 'true'},
     topo.Scope('zone', allow_identifiers=True)),
    ({'policy_scope_allow_identifiers': 'True',
      'policy_scope_obfuscate_identifiers': 'yes',
      'policy_scope_namespace': str(NS)},
     topo.Scope('zone', True, True, NS)),
])
def test_scope_settings_from_metadata(metadata, expected):
    topology = topo.from_aggregates(
        [agg('zone-a', ['h1'], policy_scope='zone', **metadata)])
    assert topology.scope('zone') == expected
    assert topology.problems == []


@pytest.mark.parametrize('first, second, problem', [
    ({'policy_scope_allow_identifiers': 'true'},
     {'policy_scope_allow_identifiers': 'false'}, 'disagree'),
    ({'policy_scope_allow_identifiers': 'maybe'}, {}, 'not a boolean'),
    ({'policy_scope_namespace': 'nope'}, {}, 'not a uuid'),
    ({'policy_scope_allow_identifiers': 'true',
      'policy_scope_obfuscate_identifiers': 'true'}, {},
     'policy_scope_namespace is not'),
])
def test_bad_scope_settings_disable_identifiers(first, second, problem):
    topology = topo.from_aggregates([
        agg('zone-a', ['h1'], policy_scope='zone', **first),
        agg('zone-b', ['h2'], policy_scope='zone', **second)])
    assert topology.scope('zone') == topo.Scope('zone')
    assert len(topology.problems) == 1
    assert problem in topology.problems[0]


def test_obfuscation_is_two_uuid5_passes():
    domain = '0b7d4a3e-2f0c-4a57-9d55-3f3c8b1f0a11'
    expected = str(uuid.uuid5(uuid.uuid5(NS, 'tenant-a'), domain))
    assert topo.obfuscate(NS, 'tenant-a', domain) == expected
    assert topo.obfuscate(NS, 'tenant-b', domain) != expected


def _zones(**settings):
    metadata = {'policy_scope': 'zone'}
    metadata.update(settings)
    return topo.from_aggregates([agg('zone-a', ['h1'], **metadata),
                                 agg('zone-b', ['h2'], **metadata)])


def test_resolve_real_identifier():
    topology = _zones(policy_scope_allow_identifiers='true')
    assert topology.resolve_identifier('zone', 'uuid-zone-b', 'p') == \
        'uuid-zone-b'


def test_resolve_obfuscated_identifier_per_tenant():
    topology = _zones(policy_scope_allow_identifiers='true',
                      policy_scope_obfuscate_identifiers='true',
                      policy_scope_namespace=str(NS))
    mine = topo.obfuscate(NS, 'tenant-a', 'uuid-zone-b')
    assert topology.resolve_identifier('zone', mine, 'tenant-a') == \
        'uuid-zone-b'
    with pytest.raises(PolicyError, match='no domain of scope zone'):
        topology.resolve_identifier('zone', mine, 'tenant-b')
    with pytest.raises(PolicyError, match='no domain of scope zone'):
        topology.resolve_identifier('zone', 'uuid-zone-b', 'tenant-a')


@pytest.mark.parametrize('scope, settings, problem', [
    ('zone', {}, 'does not allow targeting'),
    ('host', {}, 'does not allow targeting'),
    ('pod', {}, "unknown scope 'pod'"),
])
def test_resolve_identifier_errors(scope, settings, problem):
    with pytest.raises(PolicyError) as err:
        _zones(**settings).resolve_identifier(scope, 'uuid-zone-a', 'p',
                                              field='policies[0]')
    assert err.value.field == 'policies[0]'
    assert problem in str(err.value)


def test_stored_scopes_join_and_replace_metadata_scopes():
    ns = '6f72348f-df5d-4e0f-a043-4be92996dbfe'
    aggs = [topo.AggregateInfo('a1', 'rack-1', ['h1'],
                               {'policy_scope': 'rack'}),
            topo.AggregateInfo('a2', 'zone-x', ['h2']),
            topo.AggregateInfo('a3', 'sw-1', ['h1', 'h2'],
                               {'policy_scope': 'switch'})]
    stored = [records.ScopeRecord('zone', allow_identifiers=True,
                                  obfuscate_identifiers=True,
                                  obfuscate_namespace_uuid=ns,
                                  aggregates=('a2', 'gone')),
              records.ScopeRecord('switch', allow_identifiers=False,
                                  obfuscate_identifiers=False,
                                  obfuscate_namespace_uuid=ns,
                                  aggregates=('a1',))]
    topology = topo.from_aggregates(aggs, stored)
    assert topology.domains_of('rack', 'h1') == ('a1',)
    assert topology.domains_of('zone', 'h2') == ('a2',)
    # the stored 'switch' replaced the metadata one: a1 is its domain now
    assert topology.domains_of('switch', 'h1') == ('a1',)
    assert topology.domains_of('switch', 'h2') == ()
    assert topology.scope('zone').obfuscate_identifiers
    assert topology.problems == [
        'scope switch is defined by the policy store and by aggregate '
        'metadata policy_scope; the policy store wins',
        'scope zone: aggregate gone does not exist']


def test_todays_names_stay_importable_from_the_package():
    from nova_scoped_policies.topology import (  # noqa: F401
        ALLOW_IDENTIFIERS_KEY, AggregateInfo, Domain, HostIndex, NAMESPACE_KEY,
        NO_DOMAINS, OBFUSCATE_IDENTIFIERS_KEY, SCOPE_KEY, Scope, Topology,
        from_aggregates, obfuscate, scope_from_record)


def test_stored_scope_records_build_the_same_topology():
    stored = [records.ScopeRecord('rack', allow_identifiers=True,
                                  obfuscate_identifiers=False,
                                  obfuscate_namespace_uuid=None,
                                  aggregates=('a1', 'a2'))]
    topology = topo.from_scope_records(stored, {'a1': ['h1'], 'a2': ['h2']})
    assert topology.domains_of('rack', 'h2') == ('a2',)
    assert topology.resolve_identifier('rack', 'a1', 'p') == 'a1'
    assert topology.problems == []
