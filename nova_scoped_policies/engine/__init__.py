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
from nova_scoped_policies.engine.plugins.affinity import Affinity
from nova_scoped_policies.engine.plugins.anti_affinity import AntiAffinity
from nova_scoped_policies.engine.plugins.base import HardPolicy
from nova_scoped_policies.engine.plugins.base import SoftPolicy
from nova_scoped_policies.engine.plugins.min_domains import MinDomains
from nova_scoped_policies.engine.plugins.soft_affinity import SoftAffinity
from nova_scoped_policies.engine.plugins.soft_anti_affinity import \
    SoftAntiAffinity
from nova_scoped_policies.engine.reasons import Reason
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyType

__all__ = ['Engine', 'Evaluation', 'Request', 'Reason', 'Verdict',
           'MIN_DOMAINS_RULE']

MIN_DOMAINS_RULE = 'min-domains'
"""Family name of the min_domains_S checks (see Evaluation.reasons)."""

HARD_PLUGINS: typing.Dict[str, HardPolicy] = {
    PolicyType.AFFINITY.value: Affinity(),
    PolicyType.ANTI_AFFINITY.value: AntiAffinity(),
    MIN_DOMAINS_RULE: MinDomains(),
}
SOFT_PLUGINS: typing.Dict[str, SoftPolicy] = {
    PolicyType.SOFT_AFFINITY.value: SoftAffinity(),
    PolicyType.SOFT_ANTI_AFFINITY.value: SoftAntiAffinity(),
}


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


class Evaluation:
    """A request compiled into per-host checks and weights.

    :param context: the request's shared counts.
    :param checks: family -> [(label, check)] for hard policies and rules.
    :param weighers: soft policy type -> [(label, weight function)].
    :param warnings: soft policies skipped, and why.
    """

    def __init__(self, context: PlacementContext,
                 checks: typing.Dict[str, typing.List[
                     typing.Tuple[str, HostCheck]]],
                 weighers: typing.Dict[str, typing.List[
                     typing.Tuple[str, HostWeight]]],
                 warnings: typing.List[str]) -> None:
        self.context = context
        self._checks = checks
        self._weighers = weighers
        self.warnings = warnings
        self._by_families: typing.Dict[typing.FrozenSet[str],
                                       typing.Tuple[HostCheck, ...]] = {}

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
        fns = [fn for _, fn in self._weighers.get(str(kind), ())]
        if not fns:
            return lambda host: 0.0
        if len(fns) == 1:
            return fns[0]
        return lambda host: sum(fn(host) for fn in fns)

    def weight(self, host: str, kind: typing.Union[PolicyType, str]) -> float:
        """Sum of the raw weights of the soft policies of one type."""
        return self.weigher(kind)(host)

    def verdict(self, host: str) -> Verdict:
        found = self.reasons(host)
        weights = {label: fn(host) for pairs in self._weighers.values()
                   for label, fn in pairs}
        return Verdict(not found, found, weights)

    def verdicts(self, hosts: typing.Iterable[str]
                 ) -> typing.Dict[str, Verdict]:
        """A verdict for every host (for tools; filters use reasons())."""
        return {host: self.verdict(host) for host in hosts}


class Engine:
    """Compiles requests into :class:`Evaluation` objects.

    :param hard: plugin per hard policy family.
    :param soft: plugin per soft policy type.
    """

    def __init__(self, hard: typing.Optional[
                     typing.Mapping[str, HardPolicy]] = None,
                 soft: typing.Optional[
                     typing.Mapping[str, SoftPolicy]] = None) -> None:
        self.hard = dict(HARD_PLUGINS if hard is None else hard)
        self.soft = dict(SOFT_PLUGINS if soft is None else soft)

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
        document = request.document
        items: typing.List[typing.Tuple[str, str, Policy]] = [
            (p.type.value, document.field_of(i), p)
            for i, p in enumerate(document.policies)]
        items += [(MIN_DOMAINS_RULE, f'rules.min_domains_{scope}',
                   Policy(PolicyType.ANTI_AFFINITY, scope))
                  for scope in sorted(request.document.rules.min_domains)]
        for family, field, policy in items:
            label = (str(policy) if family != MIN_DOMAINS_RULE
                     else field.split('.', 1)[1])
            known = topology.scope(policy.scope) is not None
            if family in self.soft:
                if not known:
                    warnings.append(f'{label}: scope {policy.scope} is not '
                                    'defined; soft policy ignored')
                    continue
                weighers.setdefault(family, []).append(
                    (label, self.soft[family].prepare(policy, field, ctx)))
                continue
            if not known:
                check = ctx.unknown_scope(policy.scope, label)
            else:
                check = self.hard[family].prepare(policy, field, ctx)
            if check is not None:
                checks.setdefault(family, []).append((label, check))
        return Evaluation(ctx, checks, weighers, warnings)
