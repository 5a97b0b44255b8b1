"""The scoped policy engine (pure Python: no nova, no HTTP, no CONF).

Plain data in (a :class:`Request`), decisions, weights and reasons out::

    evaluation = Engine().prepare(request)
    evaluation.reasons('h1')            # () when h1 passes every policy
    evaluation.weights('soft-anti-affinity', ['h1', 'h2'])

``prepare`` costs O(members) per scope; each host then costs O(policies).
"""

import dataclasses
import operator
import typing

from nova_scoped_policies.engine import context as context_mod
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.context import Request
from nova_scoped_policies.engine.plugins.base import Item
from nova_scoped_policies.engine.plugins.base import PolicyPlugin
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.engine import reasons as reasons_mod
from nova_scoped_policies.engine.reasons import Reason

__all__ = ['Engine', 'Evaluation', 'JointEvaluation', 'Request', 'Reason',
           'Verdict', 'join', 'summary']

Weigher = typing.Tuple[str, HostWeight, int]
"""A prepared soft item: (label, raw weight function, its weight_)."""


def summary(found: typing.Mapping[str, typing.Sequence[Reason]]
            ) -> typing.Optional[str]:
    """:func:`engine.reasons.summary` in the plugins' sentences."""
    return reasons_mod.summary(found, registry.codes())


def _weigh(entries: typing.Iterable[Weigher],
           hosts: typing.Sequence[str]) -> typing.List[float]:
    """Each soft item's raw weights over ``hosts`` scaled to [0, 1] (as
    nova scales a weigher's), times its ``weight_<policy>``, summed: one
    item of weight w counts w times one nova weigher."""
    total: typing.Optional[typing.List[float]] = None
    for _, fn, weight in entries:
        values = context_mod.scaled(fn, hosts, weight)
        total = values if total is None else list(
            map(operator.add, total, values))
    if total is None:
        return [0.0] * len(hosts)
    return total


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


def _once(make: typing.Callable[..., HostWeight], *args: typing.Any
          ) -> typing.Callable[[], HostWeight]:
    """``make(*args)``, made on first call only: a request only the
    Placement query reads (the request filters) never builds its
    weights."""
    made: typing.List[HostWeight] = []

    def get() -> HostWeight:
        if not made:
            made.append(make(*args))
        return made[0]
    return get


def _passes(host: str) -> None:
    """The check of an item that rejects no host."""
    return None


class Evaluation:
    """A request compiled into per-host checks and weights.

    :param context: the request's shared counts.
    :param checks: family -> [(label, check)] for hard policies and rules.
    :param weighers: nova weigher kind -> its soft items as (label, a
        function that makes the weight function on first call, weight).
    :param warnings: soft policies skipped, and why.
    :param items: every (plugin, item) of the document, in order.
    :param check_items: family -> the (plugin, item) of each of its
        checks, in the same order.
    """

    def __init__(self, context: PlacementContext,
                 checks: typing.Dict[str, typing.List[
                     typing.Tuple[str, HostCheck]]],
                 weighers: typing.Dict[str, typing.List[typing.Tuple[
                     str, typing.Callable[[], HostWeight], int]]],
                 warnings: typing.List[str],
                 items: typing.Sequence[typing.Tuple[
                     PolicyPlugin, Item]] = (),
                 check_items: typing.Optional[typing.Mapping[
                     str, typing.Sequence[typing.Tuple[
                         PolicyPlugin, Item]]]] = None) -> None:
        self.context = context
        self.items = tuple(items)
        self._check_items = check_items or {}
        self._checks = checks
        self._weighers_made = weighers
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

    def has_weights(self, kind: str) -> bool:
        return bool(self._weighers_made.get(str(kind)))

    @property
    def reads_candidates(self) -> bool:
        """Whether an item reads the request's candidates (spread's
        eligible domains): only then are they worth a pass over the
        hosts (:meth:`checks_for`)."""
        return any(p.reads_candidates for p, _ in self.items)

    def checks_for(self, families: typing.Iterable[str] = (),
                   candidates: typing.Optional[
                       typing.Collection[str]] = None
                   ) -> typing.Tuple[HostCheck, ...]:
        """The prepared checks of some families (plugin names, see
        ``registry.families``); all of them when ``families`` is empty.

        :param candidates: the hosts the request still considers (they
            passed its other filters), for the plugins that read them
            (``reads_candidates``); None: every host.
        """
        key = frozenset(families)
        found = self._by_families.get(key)
        if found is None:
            found = tuple(check for family, pairs in self._checks.items()
                          if not key or family in key
                          for _, check in pairs)
            self._by_families[key] = found
        if candidates is None or not self.reads_candidates:
            return found
        ctx = self.context.narrowed(candidates)
        return tuple(
            plugin.check(item, ctx) or _passes
            if plugin.reads_candidates and plugin.hard
            and self.context.topology.scope(item.scope) is not None
            else check
            for (plugin, item), check in zip(self._hard_items(key), found))

    def _hard_items(self, key: typing.FrozenSet[str]):
        """The items of :meth:`checks_for`'s checks, in their order."""
        return [pi for family, pairs in self._checks.items()
                if not key or family in key
                for pi in self._check_items[family]]

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

    def weighers(self, kind: str) -> typing.List[Weigher]:
        """The soft items nova's weigher of ``kind`` carries."""
        return [(label, made(), weight) for label, made, weight
                in self._weighers_made.get(str(kind), ())]

    def raw_weight(self, host: str, kind: str) -> float:
        """The raw weights of the soft items of weigher ``kind`` for
        ``host``, summed (neither scaled nor weighted: for tools)."""
        return sum(fn(host) for _, fn, _ in self.weighers(kind))

    def weights(self, kind: str, hosts: typing.Sequence[str]
                ) -> typing.List[float]:
        """The weights of the soft items of weigher ``kind`` for
        ``hosts``, each item scaled to [0, its ``weight_<policy>``] over
        them and summed (:func:`_weigh`)."""
        return _weigh(self.weighers(kind), hosts)

    def verdict(self, host: str) -> Verdict:
        found = self.reasons(host)
        weights = {label: fn(host) for kind in self._weighers_made
                   for label, fn, _ in self.weighers(kind)}
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

    def has_weights(self, kind: str) -> bool:
        return any(p.has_weights(kind) for p in self.parts)

    reads_candidates = Evaluation.reads_candidates

    def checks_for(self, families: typing.Iterable[str] = (),
                   candidates: typing.Optional[
                       typing.Collection[str]] = None
                   ) -> typing.Tuple[HostCheck, ...]:
        key = frozenset(families)
        if candidates is not None:
            return tuple(c for p in self.parts
                         for c in p.checks_for(key, candidates))
        found = self._by_families.get(key)
        if found is None:
            found = tuple(c for p in self.parts for c in p.checks_for(key))
            self._by_families[key] = found
        return found

    def reasons(self, host: str, families: typing.Iterable[str] = ()
                ) -> typing.Tuple[Reason, ...]:
        return tuple(r for p in self.parts
                     for r in p.reasons(host, families))

    def weighers(self, kind: str) -> typing.List[Weigher]:
        return [w for p in self.parts for w in p.weighers(kind)]

    raw_weight = Evaluation.raw_weight

    def weights(self, kind: str, hosts: typing.Sequence[str]
                ) -> typing.List[float]:
        return _weigh(self.weighers(kind), hosts)

    def verdict(self, host: str) -> Verdict:
        found = self.reasons(host)
        weights: typing.Dict[str, float] = {}
        for part in self.parts:
            for label, value in part.verdict(host).weights.items():
                weights[label] = weights.get(label, 0.0) + value
        return Verdict(not found, found, weights)

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
        check_items: typing.Dict[str, typing.List[
            typing.Tuple[PolicyPlugin, Item]]] = {}
        weighers: typing.Dict[str, typing.List[typing.Tuple[
            str, typing.Callable[[], HostWeight], int]]] = {}
        warnings: typing.List[str] = []
        items = registry.items(request.document, self.plugins)
        rules = request.document.rules
        for plugin, item in items:
            known = topology.scope(item.scope) is not None
            if not plugin.hard:
                if not known:
                    warnings.append(f'{item.label}: scope {item.scope} is '
                                    'not defined; soft policy ignored')
                    continue
                made = _once(plugin.weight, item, ctx)
                if item.identifier is not None:
                    made()  # its target is checked now (PolicyError)
                weighers.setdefault(plugin.weigher or item.family, []).append(
                    (item.label, made, rules.weight(item.label)))
                continue
            if not known:
                check = ctx.unknown_scope(item.scope, item.label)
            else:
                check = plugin.check(item, ctx)
            if check is None and not plugin.reads_candidates:
                continue
            checks.setdefault(item.family, []).append(
                (item.label, check or _passes))
            check_items.setdefault(item.family, []).append((plugin, item))
        return Evaluation(ctx, checks, weighers, warnings, items,
                          check_items)
