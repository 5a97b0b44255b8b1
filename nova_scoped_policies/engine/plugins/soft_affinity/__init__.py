"""soft-affinity:S and soft-affinity:S:ID."""

import itertools

from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import Weigh
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules


def members_near(item: base.Item, ctx: PlacementContext,
                 outside: float = 0.0) -> HostWeight:
    """Host -> members in its domain(s) of the item's scope; ``outside``
    for a host in no domain of it.

    For a targeted policy: 1 for hosts of the targeted domain, else 0.
    Shared by the soft plugins, which differ in sign and in what a host
    outside every domain weighs.
    """
    scope = item.scope
    domains_of = ctx.topology.domains_of
    if item.identifier is not None:
        target = ctx.target(item.policy, item.field)
        return lambda host: float(target in domains_of(scope, host))
    counts = ctx.counts(scope)
    if not counts:
        return Weigh(lambda host: 0.0, lambda names: [0.0] * len(names),
                     domains=(scope, lambda domain: 0.0))
    get = counts.get
    index = ctx.topology.index(scope)
    if index is None:  # the host scope
        return Weigh(lambda host: float(get(host, 0)),
                     lambda names: list(map(get, names,
                                            itertools.repeat(0))),
                     domains=(scope, lambda host: float(get(host, 0))))
    single_get = index.single.get

    def weight(host: str) -> float:
        domain = single_get(host)
        if domain is not None:
            return float(get(domain, 0))
        several = index.multiple.get(host)
        if not several:
            return float(outside)
        return float(sum(get(d, 0) for d in several))

    if index.multiple:
        return Weigh(weight, lambda names: [weight(host) for host in names])
    # every host is in one domain or none (None, which weighs
    # ``outside``): its weight is its domain's, read at C speed
    of_domain = dict(counts)
    of_domain[None] = outside
    read = of_domain.get
    return Weigh(weight, lambda names: list(map(
        read, ctx.host_domains(scope, names), itertools.repeat(0))),
        keyed=lambda names: (ctx.host_domains(scope, names),
                             lambda domain: read(domain, 0)),
        domains=(scope, lambda domain: read(domain, 0)))


def shifted(weigh: HostWeight, factor: float, offset: float) -> Weigh:
    """``offset + factor * weigh(host)``, for one host or many."""
    if not isinstance(weigh, Weigh):
        weigh = Weigh(weigh, lambda names: [weigh(h) for h in names])
    return weigh.transformed(factor, offset)


class SoftAffinity(base.PolicyTypePlugin):
    """Weight = +members in the host's domain: prefer domains with members.

    Jointly: each domain used (or each server outside the targeted
    domain) costs 1.
    """

    name = PolicyType.SOFT_AFFINITY.value
    policy_type = PolicyType.SOFT_AFFINITY
    hard = False
    nova_policy = True
    weigher = 'soft-affinity'

    def weight(self, item: base.Item, ctx: PlacementContext) -> HostWeight:
        return members_near(item, ctx)

    def against(self, item: base.Item, view: base.AuditView,
                member: str) -> bool:
        """``member``'s domain is not one the other members are in
        (targeted: not the domain the policy names)."""
        topology = view.topology
        domains = set(topology.domains_of(item.scope, view.placed[member]))
        if item.identifier is not None:
            return view.target(item) not in domains
        others = set()
        for other, host in view.placed.items():
            if other != member:
                others.update(topology.domains_of(item.scope, host))
        return bool(others) and not domains & others

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        scope = item.scope
        if item.identifier is not None:
            for domain, xs in model.by_domain(clause.servers,
                                              scope).items():
                if domain != item.identifier:
                    self.weighted(item, rules, xs, model)
            return
        self.weighted(item, rules,
                      model.present(clause.servers, scope).values(), model)
