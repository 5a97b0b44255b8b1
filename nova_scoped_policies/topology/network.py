"""The network tree: heat-policy-extension.txt's second tree (pure).

A datacenter is two trees that share their leaves, the hosts: the
location tree (scopes and their domains) and the network tree. Scopes
marked ``network`` are its levels; they form one chain through
``parent`` (``tor`` in ``pod`` in ``spine``), and their domains are
switches. Every edge has a capacity in kbit/s, each direction:

- a host's edge, to its domain at the finest network level it belongs
  to: the host's own value (``host_uplink_kbps`` in an aggregate's
  metadata, or a scenario's), else the default the caller passes
  (``[scoped_policies] host_uplink_kbps``), else no limit;
- a domain's edge, to its parent domain: the aggregate's
  ``uplink_kbps`` metadata, else its scope's ``uplink_kbps``, else no
  limit.

``hops(a, b)`` is the number of edges on the path between two hosts (0
on one host). Depth need not be uniform: a host may hang off a ``pod``
switch beside ``tor`` switches, and a ``tor`` may hang off a ``spine``.

Nothing here raises on bad data: what is wrong is a :class:`Finding`
(field-named, for the API and ``network sync`` to refuse, see
:func:`validate`), and at scheduling time a host without a path, or a
broken domain, makes network policies fail with a reason naming them
(:meth:`NetworkTree.no_path`).

Every host and domain a reason names is named by
``Topology.domain_name`` and by the host names the tree was built on:
a topology built for a tenant's view (its identifiers, surrogate
hosts) words them as that tenant may see them.
"""

import dataclasses
import re
import typing

from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.errors import shown
from nova_scoped_policies.policy.model import HOST_SCOPE

MAX_KBPS = 2147483647
"""Placement's largest amount: no edge may hold more kbit/s."""
UPLINK_KEY = 'uplink_kbps'
"""Aggregate metadata: the capacity of the uplink of this domain."""
HOST_UPLINK_KEY = 'host_uplink_kbps'
"""Aggregate metadata: the capacity of the own edge of each of its hosts
(clouds with several NIC speeds)."""
MAX_HOPS = 64
"""The largest hop count a policy may ask for."""

EdgeKey = typing.Tuple[str, str]
"""An edge, named by its lower end: (``host``, host name) for a host's
edge, (level, domain id) for a domain's uplink."""

_RATE_RE = re.compile(r'([0-9]{1,32})([A-Za-z/]{0,16})\Z')
_FACTOR = {'': 1, 'Mbit': 1000, 'Gbit': 1000000}


def kbps(value: object, field: str) -> int:
    """``value`` as a capacity in kbit/s: an integer (or a string of
    ASCII digits, as aggregate metadata holds it) from 1 to
    :data:`MAX_KBPS`.

    :raises PolicyError: naming ``field``.
    """
    number = value
    if isinstance(value, str) and value.isascii() and value.isdigit() \
            and len(value) <= 13:
        number = int(value)
    if isinstance(number, bool) or not isinstance(number, int) \
            or number < 1:
        raise PolicyError(field, value, 'must be a positive integer of '
                          'kbit/s')
    if number > MAX_KBPS:
        raise PolicyError(field, value, f'must be at most {MAX_KBPS} '
                          "kbit/s (Placement's largest amount)")
    return number


def parse_rate(text: object, field: str) -> int:
    """A bandwidth rate in kbit/s each direction: a positive integer of
    kbit/s, or with the unit ``Mbit`` or ``Gbit`` (``2Gbit`` is
    2000000).

    :raises PolicyError: naming ``field``: another unit, zero, a
        negative number, more than :data:`MAX_KBPS`.
    """
    found = _RATE_RE.match(text) if isinstance(text, str) else None
    if found is None:
        raise PolicyError(field, text, 'must be a positive integer of '
                          'kbit/s, or one with the unit Mbit or Gbit '
                          '(2Gbit)')
    number, unit = found.groups()
    if unit not in _FACTOR:
        raise PolicyError(field, text, f'has an unknown unit {shown(unit)}'
                          ': give kbit/s as a plain integer, or the unit '
                          'Mbit or Gbit')
    value = int(number) * _FACTOR[unit]
    if value < 1:
        raise PolicyError(field, text, 'must be at least 1 kbit/s')
    if value > MAX_KBPS:
        raise PolicyError(field, text, f'is more than {MAX_KBPS} kbit/s '
                          "(Placement's largest amount)")
    return value


@dataclasses.dataclass(frozen=True)
class Finding:
    """Something wrong with the network tree, for an operator to mend.

    :param field: what to mend, as the API and ``network sync`` name it:
        ``scopes.<scope>.parent``, ``scopes.<scope>.uplink_kbps``,
        ``aggregates[<name>].hosts``,
        ``aggregates[<name>].metadata.uplink_kbps``,
        ``aggregates[<name>].metadata.host_uplink_kbps``,
        ``hosts[<host>].uplink_kbps``.
    :param value: the value at fault, as given.
    :param problem: what is wrong, naming the hosts and domains.
    :param edge: the edge whose capacity it spoils, if any.
    """

    field: str
    value: object
    problem: str
    edge: typing.Optional[EdgeKey] = None

    def __str__(self) -> str:
        return self.problem

    def error(self) -> PolicyError:
        """The 400 the API answers (exit 2 of ``network sync``)."""
        return PolicyError(self.field, self.value, self.problem)


@dataclasses.dataclass(frozen=True)
class Uplinks:
    """What the network tree reads besides scopes and domains.

    :param hosts: host -> the capacity of its own edge, kbit/s.
    :param default: the capacity of every other host's edge (``[scoped_
        policies] host_uplink_kbps``); None: no limit (Neutron accounts
        the NIC, see network.rst).
    :param findings: what the feeds refused while parsing (a bad
        metadata value), each naming the edge it spoils.
    :param tenant_view: the topology is a tenant's view of the cloud:
        reasons give no figure of free capacity (it would show other
        tenants' use).
    """

    hosts: typing.Mapping[str, int] = dataclasses.field(
        default_factory=dict)
    default: typing.Optional[int] = None
    findings: typing.Tuple[Finding, ...] = ()
    tenant_view: bool = False

    def renamed(self, host: typing.Callable[[str], str],
                tenant_view: bool = True) -> 'Uplinks':
        """These uplinks on hosts renamed by ``host`` (a tenant's
        surrogates), for the view of the cloud a tenant may see."""
        return Uplinks({host(h): v for h, v in self.hosts.items()},
                       self.default, (), tenant_view)


@dataclasses.dataclass(frozen=True)
class Edge:
    """One edge of the network tree.

    :param key: its lower end (:data:`EdgeKey`).
    :param parent: the domain id at its upper end.
    :param capacity: kbit/s each direction; None: no limit (or a bad
        value: see ``problem``).
    :param problem: why its capacity cannot be read (a bad value), or
        None.
    """

    key: EdgeKey
    parent: str
    capacity: typing.Optional[int] = None
    problem: typing.Optional[str] = None

    @property
    def level(self) -> str:
        """``host`` for a host's edge, else the level of its domain."""
        return self.key[0]

    @property
    def node(self) -> str:
        """The host name, or the domain id, at its lower end."""
        return self.key[1]


_UNSET = object()


class NetworkTree:
    """The network tree of a topology, built once with it.

    Each host's chain of domains (its leaf, the leaf's parent, up to a
    root) is precomputed, so :meth:`hops` and :meth:`path` cost
    O(depth), and the hop count between two leaves is kept once asked.

    :param topology: the topology whose scopes and domains it reads
        (``scope_names``, ``scope``, ``domains``, ``index``,
        ``domain_name``).
    :param uplinks: host edges' capacities and the feeds' findings.
    """

    def __init__(self, topology, uplinks: typing.Optional[Uplinks] = None
                 ) -> None:
        self.uplinks = uplinks or Uplinks()
        self._name = topology.domain_name
        self.findings: typing.List[Finding] = list(self.uplinks.findings)
        self.levels: typing.Tuple[str, ...] = ()
        """The network levels, finest first."""
        self.broken: typing.Optional[str] = None
        """Why there is no tree at all (the levels are not one chain)."""
        self._level: typing.Dict[str, str] = {}
        self._parent: typing.Dict[str, typing.Optional[str]] = {}
        self._chain: typing.Dict[str, typing.Tuple[str, ...]] = {}
        self._leaf: typing.Dict[str, str] = {}
        self._host_problem: typing.Dict[str, str] = {}
        self._domain_problem: typing.Dict[str, str] = {}
        self._edges: typing.Dict[EdgeKey, Edge] = {}
        self._hops: typing.Dict[typing.Tuple[str, str],
                                typing.Optional[int]] = {}
        self._used: typing.Mapping[EdgeKey, int] = {}
        self._spoiled = spoiled = {f.edge: f.problem
                                   for f in self.findings if f.edge}
        scopes = [topology.scope(n) for n in topology.scope_names]
        network = [s for s in scopes if s is not None and s.network]
        for scope in scopes:
            if scope is not None and not scope.network \
                    and scope.uplink_kbps is not None:
                self.findings.append(Finding(
                    f'scopes.{scope.name}.uplink_kbps', scope.uplink_kbps,
                    f'scope {scope.name} is not a network scope: an uplink '
                    'capacity means nothing there'))
        if not network:
            return
        self.levels = self._chain_of_levels(
            {s.name: s for s in scopes if s is not None}, network)
        if self.broken is not None:
            return
        by_level = {level: topology.domains(level) for level in self.levels}
        indexes = [topology.index(level) for level in self.levels]
        for level, domains in by_level.items():
            for domain in domains:
                self._level[domain.id] = level
        for i, level in enumerate(self.levels):
            for domain in by_level[level]:
                self._parent[domain.id] = self._parent_of(
                    domain, level, self.levels[i + 1:], indexes[i + 1:])
        for domain_id in self._parent:
            self._chain_up(domain_id)
        self._leaves(topology, indexes)
        self._domain_edges(topology, by_level, spoiled)

    # -- building -------------------------------------------------------

    def _chain_of_levels(self, scopes, network) -> typing.Tuple[str, ...]:
        """The network levels, finest first; on a fault, none (and
        :attr:`broken` says why)."""
        names = sorted(s.name for s in network)
        below: typing.Dict[typing.Optional[str], typing.List[str]] = {}
        for scope in network:
            parent = scope.parent
            if parent is not None and (
                    parent not in scopes or not scopes[parent].network):
                self._refuse(f'scopes.{scope.name}.parent', parent,
                             f'network scope {scope.name} has parent '
                             f'{parent}, which is not a network scope')
                return ()
            below.setdefault(parent, []).append(scope.name)
        for parent, children in sorted(below.items(),
                                       key=lambda pc: str(pc[0])):
            if len(children) > 1:
                children = sorted(children)
                where = (f'parent {parent}' if parent is not None
                         else 'no parent')
                self._refuse(f'scopes.{children[1]}.parent', parent,
                             f'network scopes {" and ".join(children)} '
                             f'both have {where}: network levels form one '
                             'chain')
                return ()
        chain: typing.List[str] = []
        at = below.get(None, [None])[0]
        while at is not None:
            chain.append(at)
            at = (below.get(at) or [None])[0]
        if len(chain) != len(network):
            left = sorted(set(names) - set(chain))
            self._refuse(f'scopes.{left[0]}.parent',
                         scopes[left[0]].parent,
                         f'network scopes {", ".join(left)} do not reach a '
                         'top level (their parents form a cycle)')
            return ()
        return tuple(reversed(chain))

    def _refuse(self, field: str, value: object, problem: str) -> None:
        self.findings.append(Finding(field, value, problem))
        self.broken = problem

    def _parent_of(self, domain, level: str, above, indexes
                   ) -> typing.Optional[str]:
        """The domain of the nearest coarser level holding all of
        ``domain``'s hosts; None for a root (no coarser domain holds
        any) and for a domain that does not nest (a finding)."""
        hosts = sorted(domain.hosts)
        for upper, index in zip(above, indexes):
            found = [index.domains_of(h) for h in hosts]
            if not any(found):
                continue
            outer = {d for ds in found for d in ds}
            if len(outer) == 1 and all(len(ds) == 1 for ds in found):
                return next(iter(outer))
            spans = ', '.join(sorted(self._name(d) for d in outer))
            outside = [h for h, ds in zip(hosts, found) if not ds]
            detail = f'it spans {spans}' if len(outer) > 1 or any(
                len(ds) > 1 for ds in found) else f'it is partly in {spans}'
            if outside:
                detail += (f'; {_few(outside)} in no {upper} domain')
            problem = (f'network domain {domain.name} ({level}) is not '
                       f'inside one {upper} domain: {detail}')
            self._domain_problem[domain.id] = problem
            self.findings.append(Finding(
                f'aggregates[{domain.name}].hosts', hosts[:8], problem))
            return None
        return None

    def _chain_up(self, domain_id: str) -> typing.Tuple[str, ...]:
        found = self._chain.get(domain_id)
        if found is None:
            parent = self._parent.get(domain_id)
            found = (domain_id,) + (self._chain_up(parent)
                                    if parent is not None else ())
            self._chain[domain_id] = found
        return found

    def _leaves(self, topology, indexes) -> None:
        """Each host's leaf: its one domain at the finest level holding
        it; a host in several domains there has none (a finding)."""
        ambiguous: typing.Set[str] = set()
        for level, index in zip(self.levels, indexes):
            if index is None:
                continue
            for host, domain in index.single.items():
                if host not in self._leaf and host not in ambiguous:
                    self._leaf[host] = domain
            for host, domains in sorted(index.multiple.items()):
                if host in self._leaf or host in ambiguous:
                    continue
                ambiguous.add(host)
                names = sorted(self._name(d) for d in domains)
                problem = (f'host {host} is in {len(domains)} domains of '
                           f'network level {level} ({", ".join(names)}); '
                           'a host hangs off one switch')
                self._host_problem[host] = problem
                self.findings.append(Finding(
                    f'aggregates[{names[1]}].hosts', host, problem))

    def _domain_edges(self, topology, by_level, spoiled) -> None:
        for level in self.levels:
            scope = topology.scope(level)
            default = scope.uplink_kbps
            if default is not None:
                try:
                    kbps(default, f'scopes.{level}.uplink_kbps')
                except PolicyError as exc:
                    self.findings.append(Finding(
                        exc.field, default, f'the uplink capacity of '
                        f'network level {level}: {exc.problem}'))
                    default = _UNSET
            for domain in by_level[level]:
                parent = self._parent.get(domain.id)
                if parent is None:
                    continue
                key = (level, domain.id)
                capacity = domain.uplink_kbps
                problem = spoiled.get(key)
                if capacity is None and problem is None:
                    if default is _UNSET:
                        problem = (f'the capacity of network level {level} '
                                   'is not a valid number of kbit/s')
                    else:
                        capacity = default
                self._edges[key] = Edge(key, parent,
                                        None if problem else capacity,
                                        problem)

    # -- reading --------------------------------------------------------

    @property
    def problems(self) -> typing.List[str]:
        """The findings for ``Topology.problems``, less a host in two
        domains of one level (the topology says so itself)."""
        said = set(self._host_problem.values())
        return [f.problem for f in self.findings if f.problem not in said]

    def __bool__(self) -> bool:
        """Whether the cloud has network levels at all."""
        return bool(self.levels) or self.broken is not None

    def leaf(self, host: str) -> typing.Optional[str]:
        """The domain ``host`` hangs off (its finest network domain);
        None when it has none (see :meth:`no_path`)."""
        return self._leaf.get(host)

    def chain(self, host: str) -> typing.Tuple[str, ...]:
        """The network domains above ``host``, its leaf first, a root
        last; empty when it has no leaf."""
        leaf = self._leaf.get(host)
        return self._chain[leaf] if leaf is not None else ()

    def domain_chain(self, domain: str) -> typing.Tuple[str, ...]:
        """``domain`` and the domains above it, a root last."""
        return self._chain.get(domain, ())

    def level(self, domain: str) -> typing.Optional[str]:
        """The network level of ``domain``; None: not a network domain."""
        return self._level.get(domain)

    def parent(self, domain: str) -> typing.Optional[str]:
        """The domain above ``domain``; None for a root."""
        return self._parent.get(domain)

    @property
    def leaves(self) -> typing.FrozenSet[str]:
        """Every domain some host hangs off."""
        return frozenset(self._leaf.values())

    def hops(self, a: str, b: str) -> typing.Optional[int]:
        """The number of edges on the path between hosts ``a`` and
        ``b``: 0 on one host; None when there is no path
        (:meth:`no_path` says why)."""
        if a == b:
            return 0
        la = self._leaf.get(a)
        lb = self._leaf.get(b)
        if la is None or lb is None:
            return None
        return self.leaf_hops(la, lb)

    def leaf_hops(self, la: str, lb: str) -> typing.Optional[int]:
        """The hops between two distinct hosts hanging off ``la`` and
        ``lb`` (2 when they share it); None: no path."""
        if la == lb:
            return 2
        key = (la, lb) if la < lb else (lb, la)
        found = self._hops.get(key, _UNSET)
        if found is _UNSET:
            ca, cb = self._chain[la], self._chain[lb]
            shared = _shared(ca, cb)
            found = None if not shared else \
                len(ca) + len(cb) - 2 * shared + 2
            self._hops[key] = found
        return found

    def no_path(self, a: str, b: str) -> typing.Optional[str]:
        """Why hosts ``a`` and ``b`` have no path (naming the hosts and
        domains at fault); None when they have one."""
        if self.hops(a, b) is not None:
            return None
        if self.broken is not None:
            return self.broken
        if not self.levels:
            return ('the cloud has no network tree (no scope is a network '
                    'level)')
        for host in (a, b):
            if host not in self._leaf:
                return self._host_problem.get(host) or (
                    f'host {host} is in no network domain')
        ra, rb = self.chain(a)[-1], self.chain(b)[-1]
        for root in (ra, rb):
            if root in self._domain_problem:
                return self._domain_problem[root]
        return (f'{self._name(ra)} and {self._name(rb)} have no common '
                'network domain above them')

    def path(self, a: str, b: str
             ) -> typing.Optional[typing.Tuple[EdgeKey, ...]]:
        """The edges between hosts ``a`` and ``b`` (empty on one host);
        None when there is no path."""
        if a == b:
            return ()
        ca, cb = self.chain(a), self.chain(b)
        shared = _shared(ca, cb) if ca and cb else 0
        if not shared:
            return None
        level = self._level
        return ((HOST_SCOPE, a),) + tuple(
            (level[d], d) for d in ca[:len(ca) - shared]) + (
            (HOST_SCOPE, b),) + tuple(
            (level[d], d) for d in cb[:len(cb) - shared])

    def up(self, host: str) -> typing.Tuple[EdgeKey, ...]:
        """The edges from ``host`` to its root, its own first; empty
        when it has no leaf."""
        chain = self.chain(host)
        if not chain:
            return ()
        level = self._level
        return ((HOST_SCOPE, host),) + tuple(
            (level[d], d) for d in chain[:-1])

    def root(self, host: str) -> typing.Optional[str]:
        """The top domain above ``host``; None when it has no leaf."""
        chain = self.chain(host)
        return chain[-1] if chain else None

    def smallest_domain(self, domains: typing.Iterable[str]
                        ) -> typing.Optional[str]:
        """The smallest network domain holding every one of ``domains``
        (None when they have no common one, or none is given)."""
        common: typing.Optional[typing.Tuple[str, ...]] = None
        for domain in domains:
            chain = self._chain.get(domain, ())
            if common is None:
                common = chain
                continue
            shared = _shared(common, chain)
            common = common[len(common) - shared:]
            if not common:
                return None
        return common[0] if common else None

    def edge(self, key: EdgeKey) -> typing.Optional[Edge]:
        """The edge ``key``; None when there is none (a host without a
        leaf, a root domain)."""
        if key[0] != HOST_SCOPE:
            return self._edges.get(key)
        leaf = self._leaf.get(key[1])
        if leaf is None:
            return None
        problem = self._spoiled.get(key)
        capacity = None if problem else self.uplinks.hosts.get(
            key[1], self.uplinks.default)
        return Edge(key, leaf, capacity, problem)

    def edges(self, hosts: typing.Iterable[str] = ()
              ) -> typing.Iterator[Edge]:
        """Every domain's uplink, then the edges of ``hosts``."""
        yield from self._edges.values()
        for host in hosts:
            found = self.edge((HOST_SCOPE, host))
            if found is not None:
                yield found

    def name(self, key: EdgeKey) -> str:
        """An edge's name for people: its host, or its domain's name."""
        return key[1] if key[0] == HOST_SCOPE else self._name(key[1])

    def with_used(self, used: typing.Mapping[EdgeKey, int]
                  ) -> 'NetworkTree':
        """This tree, its edges' free capacity lowered by ``used``
        (kbit/s each direction held by others, as Placement says)."""
        other = object.__new__(NetworkTree)
        other.__dict__.update(self.__dict__)
        other._used = dict(used)
        return other

    def free(self, key: EdgeKey) -> typing.Optional[int]:
        """An edge's capacity less what others use; None: no limit."""
        found = self.edge(key)
        if found is None or found.capacity is None:
            return None
        return found.capacity - self._used.get(key, 0)


def _shared(ca: typing.Sequence[str], cb: typing.Sequence[str]) -> int:
    """How many domains two chains (leaf first, root last) share."""
    n = 0
    for x, y in zip(reversed(ca), reversed(cb)):
        if x != y:
            break
        n += 1
    return n


def _few(hosts: typing.Sequence[str], most: int = 3) -> str:
    listed = ', '.join(hosts[:most])
    return listed + (f' and {len(hosts) - most} more'
                     if len(hosts) > most else '')


def validate(topology, require_capacity: bool = False
             ) -> typing.List[PolicyError]:
    """What the policy API (400) and ``network sync`` (exit 2) refuse of
    a network tree, each error naming its field: levels that are not one
    chain, a host under two domains of one level, a domain outside its
    parent's (a tree that does not nest), a capacity that is not a
    positive integer or is over :data:`MAX_KBPS` and, with
    ``require_capacity``, a domain's uplink without one (each edge is a
    Placement provider with an inventory).

    :param topology: the topology as it would be (the stored scopes with
        the change asked for, the aggregates as they are).
    """
    tree = topology.network
    found = [f.error() for f in tree.findings]
    if require_capacity:
        for edge in tree.edges():
            if edge.capacity is None and edge.problem is None:
                name = tree.name(edge.key)
                found.append(PolicyError(
                    f'aggregates[{name}].metadata.{UPLINK_KEY}', None,
                    f'the uplink of {name} has no capacity: set '
                    f'{UPLINK_KEY} on the aggregate or on scope '
                    f'{edge.level}'))
    return found


def parse_metadata(name: str, hosts: typing.Iterable[str],
                   metadata: typing.Mapping[str, str],
                   level: typing.Optional[str], domain_id: str,
                   host_values: typing.Dict[str, typing.Set[int]],
                   findings: typing.List[Finding]
                   ) -> typing.Optional[int]:
    """An aggregate's uplink capacity (None: not given or bad, a finding
    then) and, into ``host_values``, the ``host_uplink_kbps`` it gives
    its hosts.

    :param level: its network level, when it is a network domain.
    """
    own = None
    raw = metadata.get(UPLINK_KEY)
    if raw is not None and level is not None:
        field = f'aggregates[{name}].metadata.{UPLINK_KEY}'
        try:
            own = kbps(raw, field)
        except PolicyError as exc:
            findings.append(Finding(
                field, raw, f'the uplink of {name}: {exc.problem} '
                f'(got {shown(raw)})', (level, domain_id)))
    raw = metadata.get(HOST_UPLINK_KEY)
    if raw is not None:
        field = f'aggregates[{name}].metadata.{HOST_UPLINK_KEY}'
        try:
            value = kbps(raw, field)
        except PolicyError as exc:
            for host in sorted(hosts):
                findings.append(Finding(
                    field, raw, f'the edge of host {host} ({name}): '
                    f'{exc.problem} (got {shown(raw)})', (HOST_SCOPE, host)))
        else:
            for host in hosts:
                host_values.setdefault(host, set()).add(value)
    return own


def host_uplinks(host_values: typing.Mapping[str, typing.Set[int]],
                 findings: typing.List[Finding]) -> typing.Dict[str, int]:
    """host -> its edge's capacity: where aggregates disagree, the
    smallest, and a finding."""
    found = {}
    for host, values in sorted(host_values.items()):
        found[host] = min(values)
        if len(values) > 1:
            findings.append(Finding(
                f'hosts[{host}].{HOST_UPLINK_KEY}', sorted(values),
                f'aggregates of host {host} disagree on its '
                f'{HOST_UPLINK_KEY} ({", ".join(map(str, sorted(values)))})'
                f'; the smallest holds'))
    return found
