"""soft-anti-affinity:S and soft-anti-affinity:S:ID."""

from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins.soft_affinity import members_near
from nova_scoped_policies.engine.plugins.soft_affinity import shifted
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules


class SoftAntiAffinity(base.PolicyTypePlugin):
    """Weight = -members in the host's domain: prefer emptier domains.

    Jointly: each member beyond the first in a domain costs 1.
    """

    name = PolicyType.SOFT_ANTI_AFFINITY.value
    policy_type = PolicyType.SOFT_ANTI_AFFINITY
    hard = False
    nova_policy = True
    weigher = 'soft-anti-affinity'

    def weight(self, item: base.Item, ctx: PlacementContext) -> HostWeight:
        return shifted(members_near(item, ctx), -1.0, 0.0)

    def against(self, item: base.Item, view: base.AuditView,
                member: str) -> bool:
        """``member``'s domain holds another member (targeted: it is
        the domain the policy avoids)."""
        domains = set(view.topology.domains_of(item.scope,
                                               view.placed[member]))
        if item.identifier is not None:
            return view.target(item) in domains
        return any(domains.intersection(view.topology.domains_of(
            item.scope, host)) for other, host in view.placed.items()
            if other != member)

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        scope, m = item.scope, model.m
        fixed = model.fixed_domains(clause, scope)
        if clause.counts_union(scope):
            groups = {d: list(xs) for d, xs in
                      model.by_domain(clause.servers, scope).items()}
        else:
            groups = {}
            for part in clause.parts:
                for d, var in model.present(part, scope).items():
                    groups.setdefault(d, []).append(var)
        terms = []
        for domain, xs in groups.items():
            extra = fixed.get(domain, 0)
            if len(xs) + extra < 2:
                continue
            excess = m.NewIntVar(0, len(xs) + extra, '')
            m.Add(excess >= sum(xs) + extra - 1)
            terms.append(excess)
        self.weighted(item, rules, terms, model)
