"""anti-affinity:S (with max_server_per_S) and anti-affinity:S:ID."""

import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy


class AntiAffinity(base.HardPolicy):
    """Pass iff the host's domain holds fewer than max_server_per_S members.

    A targeted ``anti-affinity:S:ID`` instead rejects the hosts of domain ID.
    On a move, the host the instance runs on passes host-scope
    anti-affinity, as Nova's ServerGroupAntiAffinityFilter lets it.
    """

    def prepare(self, policy: Policy, field: str,
                ctx: PlacementContext) -> typing.Optional[HostCheck]:
        label = str(policy)
        scope = policy.scope
        names = ctx.topology.domain_name
        if policy.identifier is not None:
            target = ctx.target(policy, field)
            target_name = names(target)

            def excluded(host: str, domain: str):
                if domain == target:
                    return reasons.Reason(
                        reasons.EXCLUDED_DOMAIN, label, scope,
                        f'{label}: {target_name} is excluded',
                        domain=target_name)
                return None
            return ctx.locate(scope, label, excluded)

        limit = ctx.limit(scope)
        counts = ctx.counts(scope)
        full = ctx.full_domains(scope)

        def reason(domain: str) -> reasons.Reason:
            name = names(domain)
            return reasons.Reason(
                reasons.DOMAIN_FULL, label, scope,
                f'{label}: {name} holds {counts[domain]} of max {limit}',
                domain=name, count=counts[domain], limit=limit)

        if scope == HOST_SCOPE:
            if not full:
                return None
            exempt = ctx.current_host

            def host_check(host: str):
                if host in full and host != exempt:
                    return reason(host)
                return None
            return host_check

        def on_domain(host: str, domain: str):
            return reason(domain) if domain in full else None
        return ctx.locate(scope, label, on_domain)
