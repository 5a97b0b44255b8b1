"""Hard scoped policies as Placement aggregate constraints (pure Python).

What a request can already rule out before any host is looked at:
``member_of=in:`` for the domains a member must join, ``member_of=!in:`` for
domains that are full, excluded or, under ``min_domains``, may not be
reused. Host scope stays with the host filters (a host is no aggregate).
The host filters still check everything: this only shrinks the candidates.
"""

import dataclasses
import typing

from nova_scoped_policies.engine import Evaluation
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import PolicyType


@dataclasses.dataclass(frozen=True)
class AggregateConstraints:
    """Aggregate constraints for ``GET /allocation_candidates``.

    :param required: each entry is one ``member_of=in:a,b`` (any of them);
        entries AND together.
    :param forbidden: ``member_of=!in:...``: none of them.
    :param why: one line per constraint, for logs.
    """

    required: typing.Tuple[typing.FrozenSet[str], ...] = ()
    forbidden: typing.FrozenSet[str] = frozenset()
    why: typing.Tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.required or self.forbidden)


def constraints(evaluation: Evaluation) -> AggregateConstraints:
    """The aggregate constraints implied by a request's hard policies.

    Uses the counts the evaluation already built: O(domains with members).

    :param evaluation: the prepared request.
    """
    ctx = evaluation.context
    topology = ctx.topology
    rules = ctx.rules
    required: typing.List[typing.FrozenSet[str]] = []
    forbidden: typing.Set[str] = set()
    why: typing.List[str] = []

    def forbid(domains, reason):
        if domains:
            forbidden.update(domains)
            why.append(f'{reason}: !in {sorted(domains)}')

    def require(domains, reason):
        if domains:
            required.append(frozenset(domains))
            why.append(f'{reason}: in {sorted(domains)}')

    for i, policy in enumerate(ctx.request.document.policies):
        scope = policy.scope
        if (not policy.hard or scope == HOST_SCOPE
                or topology.scope(scope) is None):
            continue
        label = str(policy)
        if policy.identifier is not None:
            target = ctx.target(policy,
                                ctx.request.document.field_of(i))
            if policy.type is PolicyType.AFFINITY:
                require({target}, label)
            else:
                forbid({target}, label)
            continue
        if policy.type is PolicyType.AFFINITY:
            counts = ctx.counts(scope)
            if ctx.placed and counts:
                require(set(counts), label)
        else:
            forbid(ctx.full_domains(scope),
                   f'{label} (max {ctx.limit(scope)})')
    for scope, needed in sorted(rules.min_domains.items()):
        if scope == HOST_SCOPE or topology.scope(scope) is None:
            continue
        if ctx.min_domains_binds(scope):
            forbid(set(ctx.counts(scope)), f'min_domains_{scope}={needed}')
    return AggregateConstraints(tuple(required), frozenset(forbidden),
                                tuple(why))
