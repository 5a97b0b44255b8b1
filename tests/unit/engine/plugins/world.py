"""The small cloud every plugin's rows are about, and the row record."""

import dataclasses
import typing

from nova_scoped_policies import topology as topo

DOMAINS = {
    'rack': {'rack-1': ['h1', 'h2'], 'rack-2': ['h3', 'h4'],
             'rack-3': ['h5', 'h6']},
    'zone': {'zone-a': ['h1', 'h3'], 'zone-b': ['h2', 'h4', 'h5', 'h6']},
    # the network tree: h6 hangs off pod-2's switch itself, h7 off none
    'tor': {'tor-1': ['h1', 'h2'], 'tor-2': ['h3', 'h4'], 'tor-3': ['h5']},
    'pod': {'pod-1': ['h1', 'h2', 'h3', 'h4'], 'pod-2': ['h5', 'h6']},
    'spine': {'spine-1': ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']},
}
NETWORK = {'tor': ('pod', 10000000), 'pod': ('spine', 40000000),
           'spine': (None, None)}
"""network level -> (its parent, its uplinks' capacity in kbit/s)."""
HOPS = {('h1', 'h2'): 2, ('h1', 'h3'): 4, ('h1', 'h5'): 6, ('h1', 'h6'): 5,
        ('h5', 'h6'): 3}
"""Some hop counts of that tree, for the rows."""
LICENSED = {'oracle-hosts': (['h1', 'h2'], 'license:ORACLE'),
            'windows-hosts': (['h3', 'h4'], 'license:windows')}
HOSTS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7']  # h7: in no domain
TRAITS = {'h6': ['CUSTOM_LICENSE_ORACLE']}


def world_aggregates() -> typing.List[topo.AggregateInfo]:
    """The aggregates of the racks, zones and licences."""
    return (
        [topo.AggregateInfo(name, name, hosts, {'policy_scope': 'rack'})
         for name, hosts in DOMAINS['rack'].items()]
        + [topo.AggregateInfo(name, name, hosts, {
            'policy_scope': 'zone',
            'policy_scope_allow_identifiers': 'true'})
           for name, hosts in DOMAINS['zone'].items()]
        + [topo.AggregateInfo(name, name, hosts, {key: 'allowed'})
           for name, (hosts, key) in LICENSED.items()]
        + [topo.AggregateInfo(name, name, hosts)
           for level in NETWORK for name, hosts in DOMAINS[level].items()])


@dataclasses.dataclass(frozen=True)
class ScopeRecord:
    """A stored network scope (what the topology reads of one)."""

    name: str
    aggregates: typing.Tuple[str, ...]
    parent: typing.Optional[str]
    uplink_kbps: typing.Optional[int]
    network: bool = True
    allow_identifiers: bool = False
    obfuscate_identifiers: bool = False
    obfuscate_namespace_uuid: typing.Optional[str] = None


def world_scopes() -> typing.List[ScopeRecord]:
    """The network levels, as the policy store keeps them."""
    return [ScopeRecord(level, tuple(DOMAINS[level]), parent, kbps)
            for level, (parent, kbps) in NETWORK.items()]


TOPOLOGY = topo.from_aggregates(world_aggregates(),
                                world_scopes()).with_traits(TRAITS)
AGGREGATES = {h: {d for scope in DOMAINS.values()
                  for d, hosts in scope.items() if h in hosts}
              | {name for name, (hosts, _) in LICENSED.items()
                 if h in hosts}
              for h in HOSTS}
ALL = frozenset(HOSTS)


@dataclasses.dataclass
class Row:
    """One case of a plugin.

    :param document: the group's policy document.
    :param placed: the hosts of the members placed so far.
    :param passing: the hosts the check passes (all, for soft types).
    :param required: the Placement ``member_of=in:`` sets.
    :param forbidden: the Placement ``member_of=!in:`` aggregates.
    :param weights: host -> weight of the soft items (after scaling,
        times ``weight_<policy>``), for the hosts listed.
    :param weigher: the nova weigher whose weights ``weights`` are.
    :param candidates: the hosts still considered (default: all).
    :param against: host -> whether a new member placed there, beside
        those of ``placed``, goes against the soft policies (the
        resilience report's ``soft``), for the hosts listed.
    """

    document: dict
    placed: typing.List[str]
    passing: typing.AbstractSet[str]
    required: typing.List[typing.Set[str]] = dataclasses.field(
        default_factory=list)
    forbidden: typing.Set[str] = dataclasses.field(default_factory=set)
    weights: typing.Dict[str, float] = dataclasses.field(
        default_factory=dict)
    weigher: typing.Optional[str] = None
    candidates: typing.Optional[typing.AbstractSet[str]] = None
    against: typing.Dict[str, bool] = dataclasses.field(
        default_factory=dict)
