"""soft-hops:N: hops:N as a preference.

At scheduling a host weighs minus the placed members it would put more
than N network hops away (or without a path): the host that breaks the
fewest pairs wins. In a stack's joint decision, on each switch, each
branch holding members too far from another branch's costs 1 (see
:func:`~nova_scoped_policies.engine.plugins.hops.encode`), and each
existing server of a relationship too far from a server costs 1.
"""

from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.context import Weigh
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins import hops
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules

PolicyType.SOFT_HOPS = PolicyType.define('soft-hops', hard=False,
                                         attracts=None)


class SoftHops(hops.HopsPlugin):
    """Weight = -(placed members beyond N hops)."""

    name = PolicyType.SOFT_HOPS.value
    policy_type = PolicyType.SOFT_HOPS
    hard = False
    weigher = 'soft-affinity'

    def weight(self, item: base.Item, ctx: PlacementContext) -> HostWeight:
        reach = hops.Reach(ctx, hops.limit(item))
        if not reach.total:
            return Weigh(lambda host: 0.0, lambda names: [0.0] * len(names))

        def raw(key) -> float:
            return -float(reach.far_key(key))
        return Weigh(lambda host: raw(reach.key(host)),
                     lambda names: list(map(raw, reach.keys(names))),
                     keyed=lambda names: (reach.keys(names), raw))

    def against(self, item: base.Item, view: base.AuditView,
                member: str) -> bool:
        """``member`` is more than N hops from another member (or has no
        path to one)."""
        n = hops.limit(item)
        network = view.topology.network
        host = view.placed[member]
        return any(not hops.within(network.hops(host, there), n)
                   for other, there in view.placed.items()
                   if other != member)

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        terms: list = []
        hops.encode(clause, model, hops.limit(item), terms)
        self.weighted(item, rules, terms, model)
