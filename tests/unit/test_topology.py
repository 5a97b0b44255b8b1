"""Table-driven tests of the topology built from host aggregates."""

import typing
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


# -- the network tree ---------------------------------------------------------

class Level(typing.NamedTuple):
    """A stored network scope, as the topology reads one."""

    name: str
    aggregates: typing.Tuple[str, ...]
    parent: typing.Optional[str] = None
    uplink_kbps: typing.Optional[int] = None
    network: bool = True
    allow_identifiers: bool = False
    obfuscate_identifiers: bool = False
    obfuscate_namespace_uuid: typing.Optional[str] = None


def fabric(extra=(), levels=None, **kwargs):
    """tor-1 (h1, h2) and tor-2 (h3, h4) in pod-1; tor-3 (h5) and h6 on
    pod-2's own switch; both pods in spine-1; h7 in no network domain."""
    aggs = [agg('tor-1', ['h1', 'h2'], uplink_kbps='10000000'),
            agg('tor-2', ['h3', 'h4']),
            agg('tor-3', ['h5']),
            agg('pod-1', ['h1', 'h2', 'h3', 'h4']),
            agg('pod-2', ['h5', 'h6'], host_uplink_kbps='25000000'),
            agg('spine-1', ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']),
            agg('rack-1', ['h7'], policy_scope='rack')] + list(extra)
    levels = levels or [
        Level('spine', ('uuid-spine-1',)),
        Level('pod', ('uuid-pod-1', 'uuid-pod-2'), 'spine', 400000000),
        Level('tor', ('uuid-tor-1', 'uuid-tor-2', 'uuid-tor-3'), 'pod',
              100000000)]
    return topo.from_aggregates(aggs, levels, **kwargs)


@pytest.mark.parametrize('a, b, hops', [
    ('h1', 'h1', 0), ('h1', 'h2', 2), ('h1', 'h3', 4), ('h1', 'h5', 6),
    # h6 hangs off pod-2's switch: depth is not uniform
    ('h1', 'h6', 5), ('h5', 'h6', 3), ('h6', 'h6', 0),
    # off the tree: no path, but 0 hops on one host
    ('h1', 'h7', None), ('h7', 'h7', 0), ('h9', 'h1', None),
])
def test_hops_count_the_edges_of_the_path(a, b, hops):
    network = fabric().network
    assert network.hops(a, b) == hops == network.hops(b, a)
    path = network.path(a, b)
    assert (None if path is None else len(path)) == hops


def test_the_tree_of_levels_and_paths():
    topology = fabric()
    network = topology.network
    assert topology.problems == []
    assert network.levels == ('tor', 'pod', 'spine')
    assert network.chain('h1') == ('uuid-tor-1', 'uuid-pod-1',
                                   'uuid-spine-1')
    assert network.chain('h6') == ('uuid-pod-2', 'uuid-spine-1')
    assert network.leaf('h7') is None and network.chain('h7') == ()
    assert network.path('h1', 'h6') == (
        ('host', 'h1'), ('tor', 'uuid-tor-1'), ('pod', 'uuid-pod-1'),
        ('host', 'h6'), ('pod', 'uuid-pod-2'))
    assert network.up('h5') == (('host', 'h5'), ('tor', 'uuid-tor-3'),
                                ('pod', 'uuid-pod-2'))
    assert network.smallest_domain(['uuid-tor-1', 'uuid-tor-2']) == \
        'uuid-pod-1'
    assert network.smallest_domain(['uuid-tor-1', 'uuid-pod-2']) == \
        'uuid-spine-1'
    assert network.smallest_domain(['uuid-tor-3']) == 'uuid-tor-3'
    assert network.smallest_domain([]) is None
    assert network.leaves == {'uuid-tor-1', 'uuid-tor-2', 'uuid-tor-3',
                              'uuid-pod-2'}


def test_edge_capacities_come_from_the_aggregate_the_scope_or_the_host():
    network = fabric(host_uplink_kbps=50000000).network

    def capacity(level, node):
        return network.edge((level, node)).capacity
    assert capacity('tor', 'uuid-tor-1') == 10000000    # its aggregate's
    assert capacity('tor', 'uuid-tor-2') == 100000000   # its scope's
    assert capacity('pod', 'uuid-pod-1') == 400000000
    assert network.edge(('spine', 'uuid-spine-1')) is None   # a root
    assert capacity('host', 'h5') == 25000000   # its aggregate's
    assert capacity('host', 'h1') == 50000000   # the option's
    assert network.edge(('host', 'h7')) is None  # off the tree
    assert fabric().network.edge(('host', 'h1')).capacity is None
    assert [e.key for e in network.edges(['h1'])] == [
        ('tor', 'uuid-tor-1'), ('tor', 'uuid-tor-2'), ('tor', 'uuid-tor-3'),
        ('pod', 'uuid-pod-1'), ('pod', 'uuid-pod-2'), ('host', 'h1')]
    used = network.with_used({('tor', 'uuid-tor-1'): 4000000})
    assert used.free(('tor', 'uuid-tor-1')) == 6000000
    assert network.free(('tor', 'uuid-tor-1')) == 10000000
    assert used.free(('host', 'h7')) is None


def test_stored_scope_records_with_aggregate_metadata_carry_capacities():
    levels = [Level('pod', ('p',)), Level('tor', ('t1', 't2'), 'pod', 5)]
    topology = topo.from_scope_records(
        levels, {'p': ['h1', 'h2'], 't1': ['h1'], 't2': ['h2']},
        {'t1': {'uplink_kbps': '7', 'host_uplink_kbps': '3'}},
        host_uplink_kbps=2)
    network = topology.network
    assert network.hops('h1', 'h2') == 4
    assert network.edge(('tor', 't1')).capacity == 7
    assert network.edge(('tor', 't2')).capacity == 5
    assert network.edge(('host', 'h1')).capacity == 3
    assert network.edge(('host', 'h2')).capacity == 2
    assert topology.scope('tor').network
    assert topology.scope('tor').uplink_kbps == 5


def test_records_of_today_build_no_network():
    topology = topo.from_aggregates(RACKS)
    assert not topology.network
    assert topology.network.levels == ()
    assert topology.network.hops('h1', 'h2') is None
    assert topology.network.hops('h1', 'h1') == 0
    assert topology.network.no_path('h1', 'h2') == (
        'the cloud has no network tree (no scope is a network level)')


def test_no_path_says_which_host_or_domains():
    network = fabric(extra=[agg('pod-3', ['h8'])], levels=[
        Level('pod', ('uuid-pod-1', 'uuid-pod-2', 'uuid-pod-3')),
        Level('tor', ('uuid-tor-1', 'uuid-tor-2', 'uuid-tor-3'),
              'pod')]).network
    assert network.hops('h1', 'h5') is None
    assert network.no_path('h1', 'h5') == (
        'pod-1 and pod-2 have no common network domain above them')
    assert network.no_path('h1', 'h7') == 'host h7 is in no network domain'
    assert network.no_path('h1', 'h3') is None
    assert network.hops('h8', 'h8') == 0


def errors(topology, **kwargs):
    return [(e.field, str(e)) for e in
            topo.network.validate(topology, **kwargs)]


def test_a_tree_that_does_not_nest_breaks_its_domain_only():
    # tor-3 now also holds h1, which is in pod-1
    topology = fabric(extra=[], levels=None)
    aggs = [a if a.name != 'tor-3' else agg('tor-3', ['h5', 'h1'])
            for a in [agg('tor-1', ['h2']), agg('tor-2', ['h3', 'h4']),
                      agg('tor-3', []), agg('pod-1', ['h1', 'h2', 'h3',
                                                      'h4']),
                      agg('pod-2', ['h5', 'h6'])]]
    topology = topo.from_aggregates(aggs, [
        Level('pod', ('uuid-pod-1', 'uuid-pod-2')),
        Level('tor', ('uuid-tor-1', 'uuid-tor-2', 'uuid-tor-3'), 'pod')])
    network = topology.network
    problem = ('network domain tor-3 (tor) is not inside one pod domain: '
               'it spans pod-1, pod-2')
    assert topology.problems == [problem]
    assert errors(topology) == [('aggregates[tor-3].hosts',
                                 'aggregates[tor-3].hosts: '
                                 "['h1', 'h5']: " + problem)]
    # its hosts reach each other, and nothing else
    assert network.hops('h1', 'h5') == 2
    assert network.no_path('h1', 'h6') == problem
    assert network.hops('h2', 'h3') == 4


def test_a_domain_partly_outside_its_parent_is_refused():
    aggs = [agg('tor-1', ['h1', 'h9']), agg('pod-1', ['h1', 'h2'])]
    topology = topo.from_aggregates(aggs, [
        Level('pod', ('uuid-pod-1',)),
        Level('tor', ('uuid-tor-1',), 'pod')])
    assert errors(topology) == [(
        'aggregates[tor-1].hosts', "aggregates[tor-1].hosts: ['h1', 'h9']: "
        'network domain tor-1 (tor) is not inside one pod domain: it is '
        'partly in pod-1; h9 in no pod domain')]


def test_a_host_under_two_switches_of_one_level_has_no_path():
    aggs = [agg('tor-1', ['h1', 'h2']), agg('tor-2', ['h2', 'h3']),
            agg('pod-1', ['h1', 'h2', 'h3'])]
    topology = topo.from_aggregates(aggs, [
        Level('pod', ('uuid-pod-1',)),
        Level('tor', ('uuid-tor-1', 'uuid-tor-2'), 'pod')])
    problem = ('host h2 is in 2 domains of network level tor (tor-1, '
               'tor-2); a host hangs off one switch')
    # said once: the topology says it of every scope
    assert topology.problems == [
        'host h2 is in 2 domains of scope tor (tor-1, tor-2); a host may '
        'be in at most one']
    assert errors(topology) == [('aggregates[tor-2].hosts',
                                 f"aggregates[tor-2].hosts: 'h2': "
                                 f'{problem}')]
    assert topology.network.no_path('h1', 'h2') == problem
    assert topology.network.hops('h1', 'h3') == 4


@pytest.mark.parametrize('levels, field, problem', [
    ([Level('pod', ()), Level('tor', (), 'rack')], 'scopes.tor.parent',
     'network scope tor has parent rack, which is not a network scope'),
    ([Level('pod', ()), Level('tor', (), 'pod'), Level('leaf', (), 'pod')],
     'scopes.tor.parent',
     'network scopes leaf and tor both have parent pod: network levels '
     'form one chain'),
    ([Level('pod', ()), Level('spine', ())], 'scopes.spine.parent',
     'network scopes pod and spine both have no parent: network levels '
     'form one chain'),
    ([Level('pod', (), 'tor'), Level('tor', (), 'pod'), Level('top', ())],
     'scopes.pod.parent', 'network scopes pod, tor do not reach a top level '
     '(their parents form a cycle)'),
])
def test_network_levels_form_one_chain(levels, field, problem):
    topology = topo.from_aggregates(
        [agg('rack-1', ['h1'], policy_scope='rack')], levels)
    ((found, text),) = errors(topology)
    assert found == field and text.endswith(': ' + problem)
    assert problem in topology.problems
    # no tree at all: every pair but one host's is without a path
    assert topology.network.no_path('h1', 'h2') == problem
    assert topology.network.hops('h1', 'h1') == 0


@pytest.mark.parametrize('metadata, field, problem', [
    ({'uplink_kbps': '10G'}, 'aggregates[tor-9].metadata.uplink_kbps',
     "the uplink of tor-9: must be a positive integer of kbit/s (got "
     "'10G')"),
    ({'uplink_kbps': '0'}, 'aggregates[tor-9].metadata.uplink_kbps',
     'must be a positive integer of kbit/s'),
    ({'uplink_kbps': '2147483648'},
     'aggregates[tor-9].metadata.uplink_kbps',
     "must be at most 2147483647 kbit/s (Placement's largest amount)"),
    ({'host_uplink_kbps': 'fast'},
     'aggregates[tor-9].metadata.host_uplink_kbps',
     'the edge of host h1 (tor-9): must be a positive integer of kbit/s'),
])
def test_bad_capacities_are_refused_and_spoil_their_edge(metadata, field,
                                                         problem):
    topology = topo.from_aggregates(
        [agg('tor-9', ['h1'], **metadata), agg('pod-1', ['h1'])],
        [Level('pod', ('uuid-pod-1',)),
         Level('tor', ('uuid-tor-9',), 'pod', 5)])
    (found,) = errors(topology)
    assert found[0] == field and problem in found[1]
    edge = topology.network.edge(
        ('host', 'h1') if 'host' in field else ('tor', 'uuid-tor-9'))
    assert edge.capacity is None and problem in edge.problem
    # hop counts do not read capacities
    assert topology.network.hops('h1', 'h1') == 0


def test_capacities_out_of_range_and_where_they_mean_nothing():
    topology = topo.from_aggregates(
        [agg('tor-1', ['h1']), agg('pod-1', ['h1']),
         agg('r', ['h1'], policy_scope='rack', host_uplink_kbps='1')],
        [Level('pod', ('uuid-pod-1',)),
         Level('tor', ('uuid-tor-1',), 'pod', 2147483648),
         Level('row', (), network=False, uplink_kbps=3)])
    assert errors(topology) == [
        ('scopes.row.uplink_kbps', 'scopes.row.uplink_kbps: 3: scope row '
         'is not a network scope: an uplink capacity means nothing there'),
        ('scopes.tor.uplink_kbps', 'scopes.tor.uplink_kbps: 2147483648: the '
         'uplink capacity of network level tor: must be at most 2147483647 '
         "kbit/s (Placement's largest amount)")]
    edge = topology.network.edge(('tor', 'uuid-tor-1'))
    assert edge.capacity is None and 'not a valid number' in edge.problem
    # any aggregate gives its hosts their edge's capacity
    assert topology.network.edge(('host', 'h1')).capacity == 1


def test_an_edge_without_capacity_is_refused_where_one_is_required():
    topology = fabric()
    assert errors(topology, require_capacity=True) == []
    topology = topo.from_aggregates(
        [agg('tor-1', ['h1']), agg('pod-1', ['h1'])],
        [Level('pod', ('uuid-pod-1',)), Level('tor', ('uuid-tor-1',),
                                              'pod')])
    assert errors(topology) == []
    assert errors(topology, require_capacity=True) == [(
        'aggregates[tor-1].metadata.uplink_kbps',
        'aggregates[tor-1].metadata.uplink_kbps: None: the uplink of tor-1 '
        'has no capacity: set uplink_kbps on the aggregate or on scope '
        'tor')]


def test_aggregates_that_disagree_on_a_host_edge_give_the_smallest():
    topology = fabric(extra=[agg('nic-1', ['h1'], host_uplink_kbps='9')],
                      host_uplink_kbps=4)
    assert topology.network.edge(('host', 'h1')).capacity == 9
    topology = fabric(extra=[agg('nic-1', ['h5'], host_uplink_kbps='9')])
    assert topology.network.edge(('host', 'h5')).capacity == 9
    assert errors(topology) == [(
        'hosts[h5].host_uplink_kbps', 'hosts[h5].host_uplink_kbps: '
        '[9, 25000000]: aggregates of host h5 disagree on its '
        'host_uplink_kbps (9, 25000000); the smallest holds')]


@pytest.mark.parametrize('text, kbps', [
    ('1', 1), ('2Gbit', 2000000), ('40Mbit', 40000),
    ('2147483647', 2147483647), ('2147Gbit', 2147000000)])
def test_rates(text, kbps):
    assert topo.network.parse_rate(text, 'f') == kbps


@pytest.mark.parametrize('text, problem', [
    ('0', 'must be at least 1 kbit/s'), ('0Gbit', 'at least 1 kbit/s'),
    ('-5', 'must be a positive integer'), ('2.5Gbit', 'positive integer'),
    ('3Tbit', "unknown unit 'Tbit'"), ('3gbit', "unknown unit 'gbit'"),
    ('2148Gbit', 'more than 2147483647'), ('9' * 30, 'more than'),
    (5, 'must be a positive integer'), ('', 'positive integer')])
def test_bad_rates_name_the_field(text, problem):
    with pytest.raises(PolicyError) as err:
        topo.network.parse_rate(text, 'relationships[0].policies[1]')
    assert err.value.field == 'relationships[0].policies[1]'
    assert problem in str(err.value)


def test_a_tenant_view_keeps_capacities_on_its_surrogate_hosts():
    uplinks = topo.Uplinks({'h1': 5}, 7)
    seen = uplinks.renamed(lambda host: 'x-' + host)
    assert seen == topo.Uplinks({'x-h1': 5}, 7, (), True)


def test_a_large_fabric_builds_once_and_answers_from_its_chains():
    """10,000 hosts under 250 top-of-rack switches in 25 pods (P9's
    fabric): each host's chain is built once; hop counts between two
    switches are kept."""
    aggs, tors, pods = [], [], []
    for p in range(25):
        pod_hosts = []
        for t in range(10):
            hosts = [f'h{p}-{t}-{i}' for i in range(40)]
            pod_hosts += hosts
            aggs.append(topo.AggregateInfo(f't{p}-{t}', f'tor-{p}-{t}',
                                           hosts))
            tors.append(f't{p}-{t}')
        aggs.append(topo.AggregateInfo(f'p{p}', f'pod-{p}', pod_hosts))
        pods.append(f'p{p}')
    aggs.append(topo.AggregateInfo('s', 'spine', [
        h for a in aggs if a.uuid.startswith('p') for h in a.hosts]))
    topology = topo.from_aggregates(aggs, [
        Level('spine', ('s',)), Level('pod', tuple(pods), 'spine',
                                      1600000000),
        Level('tor', tuple(tors), 'pod', 400000000)], 25000000)
    network = topology.network
    assert topology.problems == []
    assert len(network.leaves) == 250
    assert network.hops('h0-0-0', 'h0-0-39') == 2
    assert network.hops('h0-0-0', 'h0-9-0') == 4
    assert network.hops('h0-0-0', 'h24-9-39') == 6
    assert len(network._hops) == 2
    assert errors(topology, require_capacity=True) == []
