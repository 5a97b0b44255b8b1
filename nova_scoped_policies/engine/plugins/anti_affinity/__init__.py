"""anti-affinity:S (with max_server_per_S) and anti-affinity:S:ID."""

import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.context import DEFAULT_MAX_SERVER_PER
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import hosts_check
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import MAX_SERVER_PER
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules

DOMAIN_FULL = 'domain-full'
"""anti-affinity:S: the host's domain already holds max_server_per_S."""
EXCLUDED_DOMAIN = 'excluded-domain'
"""anti-affinity:S:ID: the host is in the excluded domain."""


class AntiAffinity(base.PolicyTypePlugin):
    """Pass iff the host's domain holds fewer than max_server_per_S members.

    A targeted ``anti-affinity:S:ID`` instead rejects the hosts of domain ID.
    On a move, the host the instance runs on passes host-scope
    anti-affinity, as Nova's ServerGroupAntiAffinityFilter lets it.
    """

    name = PolicyType.ANTI_AFFINITY.value
    policy_type = PolicyType.ANTI_AFFINITY
    nova_policy = True
    filter = 'anti-affinity'
    rules = (base.Rule(MAX_SERVER_PER, types=(name,)),)
    codes = {
        DOMAIN_FULL: '{all}{n} {scope} domains hold {count} of max {limit}',
        EXCLUDED_DOMAIN: 'the hosts left are all in the excluded {scope} '
                         'domain',
    }

    def check(self, item: base.Item,
              ctx: PlacementContext) -> typing.Optional[HostCheck]:
        label = item.label
        scope = item.scope
        names = ctx.topology.domain_name
        if item.identifier is not None:
            target = ctx.target(item.policy, item.field)
            target_name = names(target)

            def excluded(host: str, domain: str):
                if domain == target:
                    return reasons.Reason(
                        EXCLUDED_DOMAIN, label, scope,
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
                DOMAIN_FULL, label, scope,
                f'{label}: {name} holds {counts[domain]} of max {limit}',
                domain=name, count=counts[domain], limit=limit)

        if scope == HOST_SCOPE:
            if not full:
                return None
            return hosts_check(full - {ctx.current_host}, reason)

        def on_domain(host: str, domain: str):
            return reason(domain) if domain in full else None
        return ctx.locate(scope, label, on_domain)

    def constraint(self, item: base.Item, ctx: PlacementContext
                   ) -> typing.Optional[base.Constraint]:
        if item.identifier is not None:
            target = ctx.target(item.policy, item.field)
            return base.Constraint(forbidden=frozenset({target}),
                                   why=f'{item.label}: !in {[target]}')
        full = ctx.full_domains(item.scope)
        if not full:
            return None
        return base.Constraint(
            forbidden=frozenset(full),
            why=f'{item.label} (max {ctx.limit(item.scope)}): '
                f'!in {sorted(full)}')

    def audit(self, item: base.Item, view: base.AuditView
              ) -> typing.List[str]:
        start = view.begin(item)
        if start.done:
            return start.found
        found, by_domain, target = start.found, start.by_domain, start.target
        dname = view.topology.domain_name
        if target is not None:
            if by_domain[target]:
                found.append(f'{item.label}: {view.listed(by_domain[target])}'
                             f' in excluded {dname(target)}')
            return found
        limit = view.rules.max_server_per.get(item.scope,
                                              DEFAULT_MAX_SERVER_PER)
        for domain, there in sorted(by_domain.items()):
            if len(there) > limit:
                found.append(f'{item.label}: {dname(domain)} holds '
                             f'{len(there)} of max {limit} '
                             f'({view.listed(there)})')
        return found

    def counts_union(self, policy, rules: Rules) -> bool:
        """An explicit ``max_server_per_<scope>`` on a group of groups
        counts all its servers; without, member groups are kept apart."""
        return policy.scope in rules.max_server_per

    def cap(self, item: base.Item, rules: Rules) -> typing.Optional[int]:
        if item.identifier is not None:
            return None
        return rules.max_server_per.get(item.scope, DEFAULT_MAX_SERVER_PER)

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        scope, m = item.scope, model.m
        if item.identifier is not None:
            model.forbid(clause.servers, lambda ti: model.domain(ti, scope)
                         != item.identifier)
            return
        fixed = model.fixed_domains(clause, scope)
        if clause.counts_union(scope):
            limit = self.cap(item, rules)
            for domain, xs in model.by_domain(clause.servers, scope).items():
                m.Add(sum(xs) <= limit - fixed.get(domain, 0))
            return
        # between member groups: at most one group per domain
        parts = [model.present(p, scope) for p in clause.parts]
        for domain in set().union(*parts):
            m.Add(sum(p[domain] for p in parts if domain in p)
                  + (1 if domain in fixed else 0) <= 1)
