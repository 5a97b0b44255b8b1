"""soft-anti-affinity:S and soft-anti-affinity:S:ID."""

from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins.soft_affinity import members_near
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules


class SoftAntiAffinity(base.PolicyTypePlugin):
    """Weight = -members in the host's domain: prefer emptier domains."""

    name = PolicyType.SOFT_ANTI_AFFINITY.value
    policy_type = PolicyType.SOFT_ANTI_AFFINITY
    hard = False

    def weight(self, item: base.Item, ctx: PlacementContext) -> HostWeight:
        near = members_near(item, ctx)
        return lambda host: -near(host)

    def structure(self, item: base.Item, rules: Rules) -> base.Structure:
        return base.Structure(base.Kind.PREFER_APART, item.scope,
                              hard=False, identifier=item.identifier,
                              label=item.label)
