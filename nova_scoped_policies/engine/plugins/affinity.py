"""affinity:S and affinity:S:ID."""

import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy


class Affinity(base.HardPolicy):
    """Pass iff no member is placed yet or the host's domain holds one.

    A targeted ``affinity:S:ID`` passes only the hosts of domain ID.
    """

    def prepare(self, policy: Policy, field: str,
                ctx: PlacementContext) -> typing.Optional[HostCheck]:
        label = str(policy)
        scope = policy.scope
        names = ctx.topology.domain_name
        if policy.identifier is not None:
            target = ctx.target(policy, field)
            target_name = names(target)

            def in_target(host: str, domain: str):
                if domain != target:
                    return reasons.Reason(
                        reasons.NOT_TARGET, label, scope,
                        f'{label}: host {host} is in {names(domain)}, not in '
                        f'the targeted domain {target_name}',
                        domain=names(domain))
                return None
            return ctx.locate(scope, label, in_target)

        if ctx.placed == 0:
            if scope == HOST_SCOPE:
                return None
            # Anywhere, as long as later members can join: the host must be
            # in exactly one domain of the scope.
            return ctx.locate(scope, label, lambda host, domain: None)
        counts = ctx.counts(scope)
        placed = ctx.placed

        def reason(domain: str) -> reasons.Reason:
            where = ', '.join(sorted(names(d) for d in counts)) or \
                f'hosts in no domain of scope {scope}'
            name = names(domain)
            return reasons.Reason(
                reasons.NOT_WITH_MEMBERS, label, scope,
                f'{label}: {name} holds none of the {placed} placed '
                f'member(s) (they are in {where})',
                domain=name, count=0, limit=placed)

        if scope == HOST_SCOPE:
            return lambda host: None if host in counts else reason(host)

        def on_domain(host: str, domain: str):
            return None if domain in counts else reason(domain)
        return ctx.locate(scope, label, on_domain)
