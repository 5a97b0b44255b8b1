"""soft-spread:S: spread:S as a preference.

At scheduling it prefers the domains with the fewest members (as
Kubernetes scores ``whenUnsatisfiable: ScheduleAnyway``; the skew only
shifts every host's weight alike), and a host in no domain of S weighs as
one in the fullest domain (Kubernetes scores a node without the topology
key as low as the node of the fullest domain). In a stack's joint
decision each member of skew beyond ``max_skew_S``, and each member on a
host in no domain of S, costs 1.
"""

from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins.soft_affinity import members_near
from nova_scoped_policies.engine.plugins.soft_affinity import shifted
from nova_scoped_policies.engine.plugins.spread import max_skew
from nova_scoped_policies.engine.plugins.spread import SpreadPlugin
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules


class SoftSpread(SpreadPlugin):
    """Weight = -(skew after placing here)."""

    name = PolicyType.SOFT_SPREAD.value
    policy_type = PolicyType.SOFT_SPREAD
    hard = False
    weigher = 'soft-anti-affinity'

    def weight(self, item: base.Item, ctx: PlacementContext) -> HostWeight:
        fullest = max(ctx.counts(item.scope).values(), default=0)
        return shifted(members_near(item, ctx, outside=fullest), -1.0,
                       ctx.fewest(item.scope) - 1.0)

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        most, fewest = self.skew(clause, item.scope, model)
        m = model.m
        excess = m.NewIntVar(0, len(clause.servers) + len(clause.fixed), '')
        m.Add(excess >= most - fewest - max_skew(rules, item.scope))
        self.weighted(item, rules, [excess], model)
        self.weighted(item, rules, model.outside(clause.servers, item.scope),
                      model)
