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
from nova_scoped_policies.engine import JointEvaluation
from nova_scoped_policies.policy.model import HOST_SCOPE


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


def constraints(evaluation: typing.Union[Evaluation, JointEvaluation]
                ) -> AggregateConstraints:
    """The aggregate constraints implied by a request's hard items: the
    fold of every plugin's :meth:`~.PolicyPlugin.constraint`, over every
    part of a joint evaluation (each with its own members).

    Uses the counts the evaluation already built: O(domains with members).

    :param evaluation: the prepared request.
    """
    required: typing.List[typing.FrozenSet[str]] = []
    forbidden: typing.Set[str] = set()
    why: typing.List[str] = []
    pairs = [(part.context, plugin, item) for part in evaluation.parts
             for plugin, item in part.items]
    for ctx, plugin, item in pairs:
        # a host is no aggregate; an unknown scope has no domains
        if (not plugin.hard or ctx.topology.scope(item.scope) is None
                or (item.scope == HOST_SCOPE and not plugin.host_constraint)):
            continue
        found = plugin.constraint(item, ctx)
        if found is None:
            continue
        if found.required:
            required.append(found.required)
        forbidden.update(found.forbidden)
        if found.why:
            why.append(found.why)
    return AggregateConstraints(tuple(required), frozenset(forbidden),
                                tuple(why))
