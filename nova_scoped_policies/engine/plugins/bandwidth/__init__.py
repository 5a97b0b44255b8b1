"""bandwidth:RATE: each pair of servers needs RATE kbit/s each direction.

heat-policy-extension.txt's network bandwidth, on the network tree
(``topology/network.py``): RATE is a positive integer of kbit/s, or one
with the unit ``Mbit`` or ``Gbit`` (``bandwidth:2Gbit``). Every pair
needs RATE on every edge of its path, in each direction, and no edge may
carry more than its capacity.

Only a stack holds it (policy-document.md): on a leaf group every pair
of members, on a group of groups every pair across member groups, on a
relationship every (from, to) pair; a server group refuses it, saying it
belongs in a stack (``stack_only``).

What this module holds is pure: the load each edge carries
(:func:`loads`: each pair's rate on every edge of its path, counted per
domain, never per pair), the edges it oversubscribes
(:func:`shortages`), the words a reader may see of them (:func:`words`),
the edges busiest first (:func:`busiest`) and the audit verdict. The
joint decision's encoding, the host check against the capacity left in
Placement and the holds are the stacks' and the scheduler's (#43); until
then a stack document refuses it as a server group does (the stacks
parse their documents with ``stack=True`` once the solver encodes it).
"""

import collections
import dataclasses
import itertools
import typing

from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins import hops
from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.topology.network import EdgeKey
from nova_scoped_policies.topology.network import NetworkTree
from nova_scoped_policies.topology.network import parse_rate

PolicyType.BANDWIDTH = PolicyType.define('bandwidth', hard=True,
                                         attracts=None)


def rate(policy: Policy) -> int:
    """The kbit/s each direction ``bandwidth:RATE`` asks for."""
    return parse_rate(policy.argument, str(policy))


Hosts = typing.Sequence[str]


def loads(network: NetworkTree, parts: typing.Sequence[Hosts], kbps: int,
          across: bool = False) -> typing.Counter[EdgeKey]:
    """The load each edge carries, kbit/s each direction: ``kbps`` for
    every pair whose path crosses it.

    Counted per edge, not per pair: the pairs that cross the uplink of a
    node holding ``a`` of ``n`` servers (of the same tree) are
    ``a * (n - a)``; across parts, less the pairs within each part.
    Pairs without a path load nothing (:func:`unrouted` lists them).

    :param parts: the hosts of the servers, one list per part (a host
        once per server on it).
    :param across: only pairs across different parts (a group of
        groups, a relationship); else every pair of the one part (a
        leaf group).
    """
    below: typing.Dict[EdgeKey, typing.List[int]] = {}
    root_of: typing.Dict[EdgeKey, str] = {}
    whole: typing.Dict[str, typing.List[int]] = {}
    size = len(parts)
    for i, hosts in enumerate(parts):
        for host, count in collections.Counter(hosts).items():
            root = network.root(host)
            if root is None:
                continue
            whole.setdefault(root, [0] * size)[i] += count
            for edge in network.up(host):
                below.setdefault(edge, [0] * size)[i] += count
                root_of[edge] = root
    found: typing.Counter[EdgeKey] = collections.Counter()
    for edge, inside in below.items():
        total = whole[root_of[edge]]
        a, n = sum(inside), sum(total)
        pairs = a * (n - a)
        if across:
            pairs -= sum(x * (t - x) for x, t in zip(inside, total))
        if pairs:
            found[edge] = pairs * kbps
    return found


Group = typing.Tuple[int, typing.List[str]]
"""Servers of one part (its index) on one tree: the part, their hosts."""


def unrouted(network: NetworkTree, parts: typing.Sequence[Hosts],
             across: bool = False) -> typing.List[typing.Tuple[Group,
                                                               Group]]:
    """Each two groups of servers with no path between them: the servers
    of one part (of the one part, without ``across``) on one tree, or on
    one host off the tree, are a group; with ``across``, only groups of
    different parts are paired."""
    groups: typing.Dict[typing.Tuple[int, typing.Any], typing.Set[str]] = {}
    for i, hosts in enumerate(parts):
        for host in hosts:
            root = network.root(host)
            groups.setdefault((i if across else 0, root if root is not None
                               else ('@', host)), set()).add(host)
    ordered = sorted(((sorted(hosts), part, root)
                      for (part, root), hosts in groups.items()),
                     key=lambda group: group[:2])
    return [((pa, a), (pb, b)) for (a, pa, ra), (b, pb, rb)
            in itertools.combinations(ordered, 2)
            if ra != rb and not (across and pa == pb)]


@dataclasses.dataclass(frozen=True)
class Shortage:
    """An edge asked to carry more than it has free.

    :param edge: the edge.
    :param need: the kbit/s each direction asked of it.
    :param free: what it has free (its capacity less what others use).
    """

    edge: EdgeKey
    need: int
    free: int

    @property
    def short(self) -> int:
        return self.need - self.free


def shortages(network: NetworkTree, load: typing.Mapping[EdgeKey, int]
              ) -> typing.List[Shortage]:
    """The edges ``load`` oversubscribes (more than ``network.free``),
    the most short first."""
    found = []
    for edge, need in load.items():
        free = network.free(edge)
        if free is not None and need > free:
            found.append(Shortage(edge, need, free))
    return sorted(found, key=lambda s: (-s.short, network.name(s.edge)))


def words(network: NetworkTree, shortage: Shortage) -> str:
    """A shortage as its reader may see it (stack-document.md): an admin
    gets names and figures (``uplink of tor-7 needs 16000000 kbit/s,
    10000000 free``); a tenant's view (``Uplinks.tenant_view``) neither
    a name nor the free capacity, which would show other tenants' use
    (``an uplink at the tor level is 6000000 kbit/s short``)."""
    if network.uplinks.tenant_view:
        return (f'an uplink at the {shortage.edge[0]} level is '
                f'{shortage.short} kbit/s short')
    return (f'uplink of {network.name(shortage.edge)} needs '
            f'{shortage.need} kbit/s, {shortage.free} free')


@dataclasses.dataclass(frozen=True)
class EdgeLoad:
    """One edge's load against its capacity.

    :param edge: the edge.
    :param name: its name for people (its host, its domain's name).
    :param capacity: kbit/s each direction.
    :param load: kbit/s each direction its pairs ask of it.
    """

    edge: EdgeKey
    name: str
    capacity: int
    load: int

    @property
    def level(self) -> str:
        return self.edge[0]


def busiest(network: NetworkTree, load: typing.Mapping[EdgeKey, int]
            ) -> typing.List[EdgeLoad]:
    """Every loaded edge that has a capacity, the fullest first (load
    over capacity, then load, then name): the simulator's ``network``
    report and the dashboard's."""
    found = []
    for edge, used in load.items():
        found_edge = network.edge(edge)
        if found_edge is not None and found_edge.capacity:
            found.append(EdgeLoad(edge, network.name(edge),
                                  found_edge.capacity, used))
    return sorted(found, key=lambda e: (-e.load / e.capacity, -e.load,
                                        e.name))


def _on(by_host: typing.Mapping[str, typing.List[str]],
        hosts: typing.Iterable[str]) -> typing.List[str]:
    return [m for host in hosts for m in by_host[host]]


class Bandwidth(base.PolicyTypePlugin):
    """Every pair's rate on every edge of its path, within capacity.

    Its host check and Placement constraint are structural: a host with
    no network path to a placed member cannot carry their pair (the
    capacity left is read from Placement by the scheduler, #43).
    """

    name = PolicyType.BANDWIDTH.value
    policy_type = PolicyType.BANDWIDTH
    stack_only = True
    """Refused on a server group (``policy.parser.build_document``)."""
    filter = 'affinity'
    host_constraint = True
    codes = {hops.NO_PATH: hops.Hops.codes[hops.NO_PATH]}

    def parse(self, parts: typing.Sequence[str], text: str,
              field: str) -> Policy:
        value = ':'.join(parts[1:]) if len(parts) > 1 else ''
        try:
            parse_rate(value, field)
        except PolicyError as exc:
            raise PolicyError(field, text, f'the rate {exc.problem}'
                              ) from None
        return Policy(self.policy_type, HOST_SCOPE, None, value)

    def conflict(self, policy: Policy, other: Policy):
        if other.type is PolicyType.BANDWIDTH:
            return 'ask for two bandwidths between the same servers'
        return None

    def needs_members(self, policy: Policy) -> bool:
        return True

    def check(self, item: base.Item,
              ctx: PlacementContext) -> typing.Optional[HostCheck]:
        return hops.check(item, ctx, None)

    def constraint(self, item: base.Item, ctx: PlacementContext
                   ) -> typing.Optional[base.Constraint]:
        return hops.constraint(item, ctx, None)

    def distinguishes(self, item: base.Item, ctx) -> base.Distinguished:
        """Every network domain, by identity (where the path runs)."""
        return {level: None for level in ctx.topology.network.levels}

    def host_key(self, item: base.Item, topology):
        """The switch a host hangs off, and its own edge's capacity."""
        network = topology.network
        return lambda host: (network.leaf(host),
                             network.free((HOST_SCOPE, host)))

    def audit(self, item: base.Item, view: base.AuditView
              ) -> typing.List[str]:
        """Pairs without a path, then every edge the members' pairs
        oversubscribe, the most short first. A view that tells members
        apart by ``part`` (member -> its member group) counts pairs
        across parts only."""
        network = view.topology.network
        part = getattr(view, 'part', None)
        sides: typing.Dict[typing.Any, typing.Dict[
            str, typing.List[str]]] = {}
        for member, host in sorted(view.placed.items()):
            sides.setdefault(part(member) if part else None, {}).setdefault(
                host, []).append(member)
        parts = [[h for h, there in side.items() for _ in there]
                 for side in sides.values()]
        across = part is not None
        label = item.label
        found = []
        members = list(sides.values())
        for (i, a), (j, b) in unrouted(network, parts, across):
            found.append(
                f'{label}: {view.listed(_on(members[i], a))} and '
                f'{view.listed(_on(members[j], b))} have no network path: '
                f'{network.no_path(a[0], b[0])}')
        load = loads(network, parts, rate(item.policy), across)
        for edge in sorted(load, key=network.name):
            spoiled = network.edge(edge)
            if spoiled is not None and spoiled.problem:
                found.append(f'{label}: {spoiled.problem}')
        found += [f'{label}: {words(network, s)}'
                  for s in shortages(network, load)]
        return found
