"""Per-request data every plugin reads: built once, shared by all checks."""

import collections
import copy
import dataclasses
import itertools
import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.topology import Topology

DEFAULT_MAX_SERVER_PER = 1
"""Nova's anti-affinity limit when max_server_per_<scope> is absent."""

HostCheck = typing.Callable[[str], typing.Optional[reasons.Reason]]
"""A prepared hard policy: host name -> None (pass) or the reason. It may
be a :class:`Check`, which also answers for many hosts in one pass."""
HostWeight = typing.Callable[[str], float]
"""A prepared soft policy: host name -> raw weight (higher wins). It may
be a :class:`Weigh`, which also answers for many hosts in one pass."""

Names = typing.Sequence[str]


class Check:
    """A host check that also answers for a whole list of hosts at once
    (what nova's ``filter_all`` hands a filter): the per-request work is
    done once and the pass over the hosts runs at C speed.

    :param one: host -> None (pass) or the reason.
    :param rejected: host names -> a set holding every one of them the
        check rejects, and none it passes (it may hold other hosts).
    :param domains: optional, for a check whose verdict depends on the
        host's domain of one scope alone: (the scope, domain id -> does
        it reject the domain's hosts?); hosts in no domain of the scope,
        or in several, are rejected. A reader that keeps hosts as
        columns (the simulator's fast engine) asks once per domain.
    :param hosts: optional, for a check by host name: (the hosts it
        rejects, or with ``allowed`` True the only hosts it passes; True).
    """

    __slots__ = ('_one', '_rejected', 'domains', 'hosts')

    def __init__(self, one: typing.Callable[[str], typing.Optional[
            reasons.Reason]],
                 rejected: typing.Callable[[Names], typing.AbstractSet[str]],
                 domains: typing.Optional[typing.Tuple[
                     str, typing.Callable[[str], bool]]] = None,
                 hosts: typing.Optional[typing.Tuple[
                     typing.AbstractSet[str], bool]] = None) -> None:
        self._one = one
        self._rejected = rejected
        self.domains = domains
        self.hosts = hosts

    def __call__(self, host: str) -> typing.Optional[reasons.Reason]:
        return self._one(host)

    def rejected(self, names: Names) -> typing.AbstractSet[str]:
        return self._rejected(names)


def rejected(check: HostCheck, names: Names) -> typing.AbstractSet[str]:
    """The hosts of ``names`` ``check`` rejects (one pass when it is a
    :class:`Check`)."""
    if isinstance(check, Check):
        return check.rejected(names)
    return {name for name in names if check(name) is not None}


class Weigh:
    """A host weight that also answers for a list of hosts at once.

    :param one: host -> raw weight.
    :param many: host names -> their raw weights, in order.
    :param factor: the weight is ``offset + factor * one(host)``: a
        weight scaled to [0, 1] over the hosts (``engine._weigh``) reads
        ``many`` and the factor's sign alone.
    :param offset: see ``factor``.
    :param keyed: optional, for a weight that depends on a key of the
        host alone (its domain): host names -> (their keys, key -> raw
        weight); :meth:`scaled` then weighs each key once.
    :param domains: optional, with ``keyed`` keyed by the host's domain
        of one scope: (the scope, domain id or None for a host in no
        domain -> raw weight), for a reader that keeps hosts as columns.
    """

    __slots__ = ('_one', '_many', 'factor', 'offset', '_keyed', 'domains')

    def __init__(self, one: typing.Callable[[str], float],
                 many: typing.Callable[[Names], typing.List[float]],
                 factor: float = 1.0, offset: float = 0.0,
                 keyed: typing.Optional[typing.Callable[[Names], typing.Tuple[
                     typing.Sequence[typing.Any],
                     typing.Callable[[typing.Any], float]]]] = None,
                 domains: typing.Optional[typing.Tuple[
                     str, typing.Callable[[typing.Optional[str]],
                                          float]]] = None) -> None:
        self._one = one
        self._many = many
        self.factor = factor
        self.offset = offset
        self._keyed = keyed
        self.domains = domains

    def __call__(self, host: str) -> float:
        return self.offset + self.factor * self._one(host)

    def many(self, names: Names) -> typing.List[float]:
        values = self._many(names)
        if self.factor == 1.0 and self.offset == 0.0:
            return values
        return [self.offset + self.factor * v for v in values]

    def scaled(self, names: Names, weight: float = 1.0
               ) -> typing.List[float]:
        """The weights of ``names`` scaled to [0, ``weight``] (all 0 when
        alike): what nova's normalisation makes of them, times
        ``weight``.

        Raw weights are member counts, so a request sees few distinct
        values: each is scaled once and the hosts read theirs at C speed.
        """
        if self._keyed is not None:
            values, raw = self._keyed(names)
            raw_of = {key: raw(key) for key in set(values)}
        else:
            values = self._many(names)
            raw_of = {v: v for v in set(values)}
        to_scaled = self.scaled_keys(raw_of, weight)
        if to_scaled is None:
            return [0.0] * len(values)
        return list(map(to_scaled.__getitem__, values))

    def scaled_keys(self, raw_of: typing.Mapping[typing.Any, float],
                    weight: float = 1.0
                    ) -> typing.Optional[typing.Dict[typing.Any, float]]:
        """key -> its weight scaled to [0, ``weight``] over the keys of
        ``raw_of`` (key -> raw weight) as :meth:`scaled` scales hosts;
        None when all are alike (all 0)."""
        low = min(raw_of.values(), default=0.0)
        high = max(raw_of.values(), default=0.0)
        if high <= low:
            return None
        if self.factor < 0:
            low, high = high, low
        scale = 1.0 / (high - low)
        return {key: (v - low) * scale * weight
                for key, v in raw_of.items()}

    def transformed(self, factor: float, offset: float) -> 'Weigh':
        """``offset + factor * self``."""
        return Weigh(self._one, self._many, self.factor * factor,
                     self.offset * factor + offset, self._keyed,
                     self.domains)


def weights(weigh: HostWeight, names: Names) -> typing.List[float]:
    """The raw weights of ``names`` (one pass when ``weigh`` is a
    :class:`Weigh`)."""
    if isinstance(weigh, Weigh):
        return weigh.many(names)
    return [weigh(name) for name in names]


def scaled(weigh: HostWeight, names: Names, weight: float = 1.0
           ) -> typing.List[float]:
    """The weights of ``names`` scaled to [0, ``weight``] over them (all 0
    when alike), as nova scales one weigher's."""
    if not isinstance(weigh, Weigh):
        weigh = Weigh(weigh, lambda hosts: [weigh(h) for h in hosts])
    return weigh.scaled(names, weight)


def hosts_check(bad: typing.AbstractSet[str],
                reason: typing.Callable[[str], reasons.Reason],
                allowed: bool = False) -> Check:
    """A check of hosts by name: those in ``bad`` fail with
    ``reason(host)``; with ``allowed``, those *not* in ``bad`` do."""
    if allowed:
        return Check(lambda host: None if host in bad else reason(host),
                     lambda names: set(names).difference(bad),
                     hosts=(bad, True))
    return Check(lambda host: reason(host) if host in bad else None,
                 lambda names: bad, hosts=(bad, False))


@dataclasses.dataclass(frozen=True)
class Request:
    """Everything the engine needs for one scheduling decision.

    :param document: the group's validated policies and rules.
    :param topology: scopes, domains and hosts.
    :param placements: member uuid -> host it runs on (None if unplaced).
        Every member of the group, wherever it is, not only candidates.
    :param in_flight: hosts already chosen for earlier instances of the same
        multi-instance request, one entry per instance.
    :param instance_uuid: the instance being scheduled; on a move it is a
        member and is not counted against itself.

    Targeted policies name real domain ids: the edges translate tenant
    identifiers first (:func:`nova_scoped_policies.identifiers.to_real`).
    """

    document: PolicyDocument
    topology: Topology
    placements: typing.Mapping[str, typing.Optional[str]] = \
        dataclasses.field(default_factory=dict)
    in_flight: typing.Sequence[str] = ()
    instance_uuid: typing.Optional[str] = None


def target(topology: Topology, policy: Policy,
           written: typing.Optional[str], field: str) -> str:
    """The real domain id a targeted policy names, checked.

    :param topology: scopes and domains.
    :param policy: a policy with a (real) identifier.
    :param written: how the caller wrote the policy, if not so; errors
        repeat the identifier as written.
    :param field: the field to name in errors.
    :raises PolicyError: the scope takes no identifiers or has no such
        domain.
    """
    return topology.target(policy.scope, policy.identifier, field,
                           written.rsplit(':', 1)[-1] if written else None)


class PlacementContext:
    """Counts of members per domain, computed lazily once per scope.

    Building costs O(members) per scope used; every later lookup is O(1),
    so a whole request costs O(hosts + members).

    :param request: the scheduling request.
    """

    def __init__(self, request: Request) -> None:
        self.request = request
        self.topology = request.topology
        self.rules = request.document.rules
        me = request.instance_uuid
        self.current_host = request.placements.get(me) if me else None
        self.placed_hosts: typing.List[str] = [
            host for member, host in request.placements.items()
            if host and member != me]
        self.placed_hosts.extend(request.in_flight)
        self._counts: typing.Dict[str, typing.Counter[str]] = {}
        # the candidates, where a request narrowed them (see narrowed)
        self.candidates: typing.Optional[typing.Collection[str]] = None
        self._fewest: typing.Dict[str, int] = {}
        self._host_domains: typing.Dict[
            str, typing.Tuple[Names, typing.List[typing.Optional[str]]]] = {}

    def narrowed(self, candidates: typing.Collection[str]
                 ) -> 'PlacementContext':
        """This context for a request that still considers only
        ``candidates`` (the hosts that passed its other filters); the
        member counts are shared."""
        other = copy.copy(self)
        # a reader that keeps hosts as columns hands candidates that
        # know their domains (``domains_in``): kept as they are
        other.candidates = candidates if hasattr(candidates, 'domains_in') \
            else frozenset(candidates)
        other._fewest = {}
        return other

    def fewest(self, scope: str) -> int:
        """The fewest members in any eligible domain of ``scope``: a
        domain with at least one candidate host (Kubernetes' topology
        spread with ``nodeAffinityPolicy: Honor``). Without candidates,
        every domain of the scope is eligible (any host, for the host
        scope: some host holds no member).
        """
        found = self._fewest.get(scope)
        if found is None:
            counts = self.counts(scope)
            if self.candidates is not None:
                found = min(map(counts.get, self._eligible(scope),
                                itertools.repeat(0)), default=0)
            elif scope == HOST_SCOPE:
                found = 0
            else:
                domains = self.topology.domains(scope)
                found = min((counts.get(d.id, 0) for d in domains
                             if d.hosts), default=0)
            self._fewest[scope] = found
        return found

    def host_domains(self, scope: str, names: Names
                     ) -> typing.List[typing.Optional[str]]:
        """The domain of ``scope`` of each host of ``names`` (None for a
        host in none or in several), at C speed. The list of the last
        ``names`` is kept: nova hands the request's filters and weighers
        the same hosts, each in a list of its own.

        :param scope: a scope of the topology, not the host scope.
        """
        last = self._host_domains.get(scope)
        if last is not None and (last[0] is names or last[0] == names):
            return last[1]
        index = self.topology.index(scope)
        domains = list(map(index.single.get, names))
        self._host_domains[scope] = (names, domains)
        return domains

    @property
    def placed(self) -> int:
        """Members placed so far (in-flight selections included)."""
        return len(self.placed_hosts)

    def counts(self, scope: str) -> typing.Counter[str]:
        """domain id -> members in it. Members on a host in several domains
        count in each; members on a host in none count in none.
        """
        counts = self._counts.get(scope)
        if counts is None:
            index = self.topology.index(scope)
            if scope == HOST_SCOPE:
                counts = collections.Counter(self.placed_hosts)
            elif index is None:
                counts = collections.Counter()
            else:
                # hosts in one domain, counted at C speed; then the rare
                # hosts in several
                counts = collections.Counter(
                    map(index.single.get, self.placed_hosts))
                counts.pop(None, None)
                if index.multiple:
                    several = index.multiple.get
                    for host in self.placed_hosts:
                        for domain in several(host, ()):
                            counts[domain] += 1
            self._counts[scope] = counts
        return counts

    def limit(self, scope: str) -> int:
        """max_server_per_<scope> (1 when the rule is absent)."""
        return self.rules.max_server_per.get(scope, DEFAULT_MAX_SERVER_PER)

    def full_domains(self, scope: str) -> typing.Set[str]:
        """Domains of ``scope`` holding max_server_per_<scope> members."""
        limit = self.limit(scope)
        return {d for d, n in self.counts(scope).items() if n >= limit}

    def _eligible(self, scope: str) -> typing.Set[str]:
        """The domains of ``scope`` holding a candidate host (the
        candidates themselves for the host scope), at C speed."""
        if scope == HOST_SCOPE:
            return set(self.candidates)
        index = self.topology.index(scope)
        if index is None:
            return set()
        domains_in = getattr(self.candidates, 'domains_in', None)
        if domains_in is not None:
            return domains_in(scope)
        found = set(map(index.single.get, self.candidates))
        found.discard(None)
        if index.multiple:
            for host in self.candidates:
                found.update(index.multiple.get(host, ()))
        return found

    def remaining(self) -> int:
        """Members still to place, this one included (rules.size based)."""
        return (self.rules.size or 0) - self.placed

    def min_domains_binds(self, scope: str) -> bool:
        """min_domains_<scope>: with ``used`` domains holding members, must
        the remaining members go to domains not used yet?
        """
        needed = self.rules.min_domains[scope]
        used = len(self.counts(scope))
        return used < needed and 0 < self.remaining() <= needed - used

    def target(self, policy: Policy, field: str) -> str:
        """The real domain id a targeted policy names.

        :raises PolicyError: the scope takes no identifiers or has no such
            domain.
        """
        return target(self.topology, policy,
                      self.request.document.written.get(policy), field)

    def locate(self, scope: str, label: str,
               on_domain: typing.Callable[[str, str],
                                          typing.Optional[reasons.Reason]]
               ) -> HostCheck:
        """Wrap a per-domain check into a per-host check for ``scope``.

        Hosts in no domain, or in several, of ``scope`` get the matching
        reason; others get ``on_domain(host, domain_id)``.

        :param scope: the scope.
        :param label: the policy or rule, for reasons.
        :param on_domain: the check of a host known to be in one domain;
            whether it rejects depends on the domain alone (the host only
            words the reason), so the many-hosts pass asks it once per
            domain.
        """
        if scope == HOST_SCOPE:
            return lambda host: on_domain(host, host)
        index = self.topology.index(scope)
        if index is None:
            return self.unknown_scope(scope, label)
        single_get = index.single.get
        multiple = index.multiple
        names = self.topology.domain_name

        def check(host: str) -> typing.Optional[reasons.Reason]:
            domain = single_get(host)
            if domain is not None:
                return on_domain(host, domain)
            several = multiple.get(host)
            if several:
                listed = ', '.join(names(d) for d in several)
                return reasons.Reason(
                    reasons.MULTIPLE_DOMAINS, label, scope,
                    f'{label}: host {host} is in {len(several)} domains of '
                    f'scope {scope} ({listed}); a host may be in at most one',
                    count=len(several), limit=1)
            return reasons.Reason(
                reasons.NO_DOMAIN, label, scope,
                f'{label}: host {host} is in no domain of scope {scope}')

        def rejected(names: Names) -> typing.AbstractSet[str]:
            domains = self.host_domains(scope, names)
            # each domain's verdict once; the reason is dropped, so the
            # domain stands in for the host that would word it
            bad = {domain for domain in set(domains)
                   if domain is None or on_domain(domain, domain) is not None}
            if not bad:
                return frozenset()
            return set(itertools.compress(names, map(bad.__contains__,
                                                     domains)))
        return Check(check, rejected, domains=(
            scope, lambda domain: on_domain(domain, domain) is not None))

    def unknown_scope(self, scope: str, label: str) -> HostCheck:
        """A check that fails every host: the scope is not defined."""
        reason = reasons.Reason(
            reasons.UNKNOWN_SCOPE, label, scope,
            f'{label}: scope {scope} is not defined')
        return lambda host: reason
