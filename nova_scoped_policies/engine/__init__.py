"""The scoped policy engine (pure Python: no nova, no HTTP, no CONF).

Plain data in (a :class:`Request`), decisions, weights and reasons out::

    evaluation = Engine().prepare(request)
    evaluation.reasons('h1')            # () when h1 passes every policy
    evaluation.weight('h1', PolicyType.SOFT_ANTI_AFFINITY)

``prepare`` costs O(members) per scope; each host then costs O(policies).
"""

import dataclasses
import typing

from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.context import Request
from nova_scoped_policies.engine.plugins.base import Item
from nova_scoped_policies.engine.plugins.base import PolicyPlugin
from nova_scoped_policies.engine.plugins.base import Structure
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.engine.reasons import Reason
from nova_scoped_policies.policy.model import PolicyType

__all__ = ['Engine', 'Evaluation', 'JointEvaluation', 'Request', 'Reason',
           'Verdict', 'MIN_DOMAINS_RULE', 'join']

MIN_DOMAINS_RULE = 'min-domains'
"""Family name of the min_domains_S checks (see Evaluation.reasons)."""


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The decision about one host.

    :param passed: True when no hard policy rejects the host.
    :param reasons: why it was rejected, one per failing policy or rule.
    :param weights: raw weight per soft policy (string form).
    """

    passed: bool
    reasons: typing.Tuple[Reason, ...] = ()
    weights: typing.Mapping[str, float] = dataclasses.field(
        default_factory=dict)


def _summed(fns: typing.List[HostWeight]) -> HostWeight:
    """One weight function: the sum of ``fns`` (0.0 when empty)."""
    if not fns:
        return lambda host: 0.0
    if len(fns) == 1:
        return fns[0]
    return lambda host: sum(fn(host) for fn in fns)


class Evaluation:
    """A request compiled into per-host checks and weights.

    :param context: the request's shared counts.
    :param checks: family -> [(label, check)] for hard policies and rules.
    :param weighers: soft policy type -> [(label, weight function)].
    :param warnings: soft policies skipped, and why.
    :param items: every (plugin, item) of the document, in order.
    """

    def __init__(self, context: PlacementContext,
                 checks: typing.Dict[str, typing.List[
                     typing.Tuple[str, HostCheck]]],
                 weighers: typing.Dict[str, typing.List[
                     typing.Tuple[str, HostWeight]]],
                 warnings: typing.List[str],
                 items: typing.Sequence[typing.Tuple[
                     PolicyPlugin, Item]] = ()) -> None:
        self.context = context
        self.items = tuple(items)
        self._checks = checks
        self._weighers = weighers
        self.warnings = warnings
        self._by_families: typing.Dict[typing.FrozenSet[str],
                                       typing.Tuple[HostCheck, ...]] = {}

    @property
    def parts(self) -> typing.Tuple['Evaluation', ...]:
        """The evaluations this one is made of, each with its own
        context: itself (see :class:`JointEvaluation`)."""
        return (self,)

    def has_checks(self, families: typing.Iterable[str] = ()) -> bool:
        """Whether any hard check of ``families`` (default: all) applies."""
        return bool(self.checks_for(families))

    def has_weights(self, kind: typing.Union[PolicyType, str]) -> bool:
        return bool(self._weighers.get(str(kind)))

    def checks_for(self, families: typing.Iterable[str] = ()
                   ) -> typing.Tuple[HostCheck, ...]:
        """The prepared checks of some families (policy types and
        :data:`MIN_DOMAINS_RULE`); all of them when ``families`` is empty.
        """
        key = frozenset(families)
        found = self._by_families.get(key)
        if found is None:
            found = tuple(check for family, pairs in self._checks.items()
                          if not key or family in key
                          for _, check in pairs)
            self._by_families[key] = found
        return found

    def reasons(self, host: str, families: typing.Iterable[str] = ()
                ) -> typing.Tuple[Reason, ...]:
        """Why ``host`` is rejected; empty when it passes.

        :param host: the compute host name.
        :param families: limit to these families (default: all).
        """
        found = []
        for check in self.checks_for(families):
            reason = check(host)
            if reason is not None:
                found.append(reason)
        return tuple(found)

    def weigher(self, kind: typing.Union[PolicyType, str]) -> HostWeight:
        """One function: host -> sum of the raw weights of the soft
        policies of type ``kind`` (0.0 when there are none).
        """
        return _summed([fn for _, fn in self._weighers.get(str(kind), ())])

    def weight(self, host: str, kind: typing.Union[PolicyType, str]) -> float:
        """Sum of the raw weights of the soft policies of one type."""
        return self.weigher(kind)(host)

    def verdict(self, host: str) -> Verdict:
        found = self.reasons(host)
        weights = {label: fn(host) for pairs in self._weighers.values()
                   for label, fn in pairs}
        return Verdict(not found, found, weights)

    def distinguished(self) -> typing.Dict[
            str, typing.Optional[typing.FrozenSet[str]]]:
        """scope -> the domains some item of the request tells apart (None:
        every domain, by identity; else domains holding members, read
        through their member counts only: see
        :data:`~nova_scoped_policies.engine.plugins.base.Distinguished`);
        a domain not listed behaves like any other without members.
        Scopes no item reads are absent.
        """
        found: typing.Dict[str, typing.Optional[typing.FrozenSet[str]]] = {}
        for plugin, item in self.items:
            for scope, domains in plugin.distinguishes(
                    item, self.context).items():
                if scope in found and found[scope] is None:
                    continue
                if domains is None or scope not in found:
                    found[scope] = domains
                else:
                    found[scope] = found[scope] | domains
        return found

    def structures(self) -> typing.List[Structure]:
        """Every item of the request as a solver's constraint record."""
        rules = self.context.rules
        return [plugin.structure(item, rules) for plugin, item in self.items]

    def verdicts(self, hosts: typing.Iterable[str]
                 ) -> typing.Dict[str, Verdict]:
        """A verdict for every host (for tools; filters use reasons())."""
        return {host: self.verdict(host) for host in hosts}


class JointEvaluation:
    """Several evaluations of one request as one: a host passes when it
    passes every part, and the weights of the parts add up.

    A server of a stack is one request under several documents at once:
    its server group's (when it has one) and one per policy of its stack
    that relates it to other servers (each with its own members: the
    other servers of a leaf group, the servers of the other member groups
    for a policy across groups, existing servers of a relationship).
    Each part keeps its own context (members, counts); callers that read
    a context (Placement constraints, the simulator's host classes, the
    explanation of no valid host) fold over :attr:`parts`.

    :param parts: the evaluations, at least one.
    """

    def __init__(self, parts: typing.Sequence[Evaluation]) -> None:
        if not parts:
            raise ValueError('parts: at least one evaluation')
        self.parts = tuple(p for part in parts for p in part.parts)
        self.items = tuple(i for p in self.parts for i in p.items)
        self.warnings = [w for p in self.parts for w in p.warnings]
        self._by_families: typing.Dict[typing.FrozenSet[str],
                                       typing.Tuple[HostCheck, ...]] = {}

    def has_checks(self, families: typing.Iterable[str] = ()) -> bool:
        return bool(self.checks_for(families))

    def has_weights(self, kind: typing.Union[PolicyType, str]) -> bool:
        return any(p.has_weights(kind) for p in self.parts)

    def checks_for(self, families: typing.Iterable[str] = ()
                   ) -> typing.Tuple[HostCheck, ...]:
        key = frozenset(families)
        found = self._by_families.get(key)
        if found is None:
            found = tuple(c for p in self.parts for c in p.checks_for(key))
            self._by_families[key] = found
        return found

    def reasons(self, host: str, families: typing.Iterable[str] = ()
                ) -> typing.Tuple[Reason, ...]:
        return tuple(r for p in self.parts
                     for r in p.reasons(host, families))

    def weigher(self, kind: typing.Union[PolicyType, str]) -> HostWeight:
        return _summed([p.weigher(kind) for p in self.parts
                        if p.has_weights(kind)])

    def weight(self, host: str, kind: typing.Union[PolicyType, str]) -> float:
        return self.weigher(kind)(host)

    def verdict(self, host: str) -> Verdict:
        found = self.reasons(host)
        weights: typing.Dict[str, float] = {}
        for part in self.parts:
            for label, value in part.verdict(host).weights.items():
                weights[label] = weights.get(label, 0.0) + value
        return Verdict(not found, found, weights)

    def structures(self) -> typing.List[Structure]:
        return [s for p in self.parts for s in p.structures()]

    def verdicts(self, hosts: typing.Iterable[str]
                 ) -> typing.Dict[str, Verdict]:
        return {host: self.verdict(host) for host in hosts}


def join(evaluations: typing.Iterable[typing.Optional[Evaluation]]
         ) -> typing.Optional[typing.Union[Evaluation, JointEvaluation]]:
    """The evaluations that are not None as one (None when none is; the
    one itself when it is alone)."""
    found = [e for e in evaluations if e is not None]
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    return JointEvaluation(found)


class Engine:
    """Compiles requests into :class:`Evaluation` objects.

    :param plugins: the policy plugins (default: the registry's).
    """

    def __init__(self, plugins: typing.Optional[
            typing.Sequence[PolicyPlugin]] = None) -> None:
        self.plugins = tuple(registry.PLUGINS if plugins is None
                             else plugins)

    def prepare(self, request: Request) -> Evaluation:
        """Compile one request.

        :param request: the scheduling request.
        :raises PolicyError: a targeted policy names a domain the tenant
            cannot target (unknown identifier, scope without identifiers).
        """
        ctx = PlacementContext(request)
        topology = request.topology
        checks: typing.Dict[str, typing.List[typing.Tuple[str, HostCheck]]] \
            = {}
        weighers: typing.Dict[str, typing.List[
            typing.Tuple[str, HostWeight]]] = {}
        warnings: typing.List[str] = []
        items = registry.items(request.document, self.plugins)
        for plugin, item in items:
            known = topology.scope(item.scope) is not None
            if not plugin.hard:
                if not known:
                    warnings.append(f'{item.label}: scope {item.scope} is '
                                    'not defined; soft policy ignored')
                    continue
                weighers.setdefault(item.family, []).append(
                    (item.label, plugin.weight(item, ctx)))
                continue
            if not known:
                check = ctx.unknown_scope(item.scope, item.label)
            else:
                check = plugin.check(item, ctx)
            if check is not None:
                checks.setdefault(item.family, []).append((item.label, check))
        return Evaluation(ctx, checks, weighers, warnings, items)
