"""soft-anti-affinity:S and soft-anti-affinity:S:ID."""

from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins.soft_affinity import members_near
from nova_scoped_policies.policy.model import Policy


class SoftAntiAffinity(base.SoftPolicy):
    """Weight = -members in the host's domain: prefer emptier domains."""

    def prepare(self, policy: Policy, field: str,
                ctx: PlacementContext) -> HostWeight:
        near = members_near(policy, field, ctx)
        return lambda host: -near(host)
