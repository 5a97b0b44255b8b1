"""soft-license-pack:PRODUCT: buy licences for the fewest hosts.

Licences charged per physical host cost least when the members running
PRODUCT share hosts: prefer hosts that already run a member (weight 1,
else 0); jointly, each host used costs 1. Pair it with
``license:PRODUCT`` to keep members on licensed hosts.
"""

from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins.license import ProductPlugin
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules

PolicyType.SOFT_LICENSE_PACK = PolicyType.define(
    'soft-license-pack', hard=False, attracts=None)


class SoftLicensePack(ProductPlugin):
    """Weight = 1 on a host holding a member, else 0."""

    name = PolicyType.SOFT_LICENSE_PACK.value
    policy_type = PolicyType.SOFT_LICENSE_PACK
    hard = False
    weigher = 'soft-affinity'

    def weight(self, item: base.Item, ctx: PlacementContext) -> HostWeight:
        here = ctx.counts(HOST_SCOPE)
        return lambda host: 1.0 if here.get(host) else 0.0

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        self.weighted(item, rules,
                      model.present(clause.servers, HOST_SCOPE).values(),
                      model)
