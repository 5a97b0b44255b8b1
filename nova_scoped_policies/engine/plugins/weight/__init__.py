"""weight_<policy>: how much one soft policy counts.

``{"weight_soft-anti-affinity:rack": 50}`` (1-100, default 1), as
Kubernetes' preferred-term weight: each soft policy's weights are scaled
to [0, 1] over the hosts, as nova scales one weigher's, then multiplied
by its weight (``engine._weigh``), so a policy of weight 50 counts 50
times one of nova's weighers at multiplier 1; in a stack's joint
decision its cost counts 50 times.
"""

import typing

from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy.model import Rules
from nova_scoped_policies.policy.model import WEIGHT

MAX_WEIGHT = 100


class WeightRule(base.Rule):
    """Needs the soft, untargeted policy it names in the document."""

    def check(self, label: str, value: int,
              policies: typing.Sequence[Policy], rules: Rules
              ) -> typing.Optional[str]:
        for policy in policies:
            if str(policy) == label:
                if policy.hard:
                    return (f'{label} is a hard policy: only soft '
                            'policies have a weight')
                if policy.identifier is not None:
                    return ('weights apply to policies without a domain '
                            'identifier')
                return None
        return f'needs the policy {label}'


class Weight(base.PolicyPlugin):
    """A rule only: the engine and the solver read ``Rules.weight``."""

    name = 'weight'
    hard = False
    rules = (WeightRule(WEIGHT, high=MAX_WEIGHT, by_policy=True),)

    def items(self, document: PolicyDocument) -> typing.List[base.Item]:
        return []
