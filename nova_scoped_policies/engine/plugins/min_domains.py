"""The min_domains_S rule: members must end up in at least N domains."""

import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.parser import MIN_DOMAINS


class MinDomains(base.HardPolicy):
    """With ``used`` domains holding members and ``remaining`` members still
    to place (this one included): if used < N and remaining <= N - used,
    the host must be in a domain that holds no member yet.

    The engine passes the rule as a policy of the rule's scope.
    """

    def prepare(self, policy: Policy, field: str,
                ctx: PlacementContext) -> typing.Optional[HostCheck]:
        scope = policy.scope
        needed = ctx.rules.min_domains[scope]
        label = f'{MIN_DOMAINS}{scope}'
        if not ctx.min_domains_binds(scope):
            return None
        counts = ctx.counts(scope)
        used = len(counts)
        remaining = ctx.remaining()
        names = ctx.topology.domain_name

        def on_domain(host: str, domain: str):
            if domain not in counts:
                return None
            name = names(domain)
            return reasons.Reason(
                reasons.MIN_DOMAINS, label, scope,
                f'{label}: {name} already holds {counts[domain]} member(s); '
                f'the {remaining} member(s) left must go to domains not used '
                f'yet to reach {needed} (used: {used})',
                domain=name, count=used, limit=needed)
        return ctx.locate(scope, label, on_domain)
