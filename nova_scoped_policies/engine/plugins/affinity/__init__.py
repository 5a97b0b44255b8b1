"""affinity:S and affinity:S:ID: the members stay in one domain."""

import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import hosts_check
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules

NOT_WITH_MEMBERS = 'not-with-members'
"""affinity:S: the host's domain holds none of the placed members."""
NOT_TARGET = 'not-target'
"""affinity:S:ID: the host is not in the targeted domain."""


class Affinity(base.PolicyTypePlugin):
    """Pass iff no member is placed yet or the host's domain holds one.

    A targeted ``affinity:S:ID`` passes only the hosts of domain ID.
    """

    name = PolicyType.AFFINITY.value
    policy_type = PolicyType.AFFINITY
    nova_policy = True
    filter = 'affinity'
    codes = {
        NOT_WITH_MEMBERS: 'only the {scope} domain of the {limit} placed '
                          'member(s) qualifies, and none of its hosts passed',
        NOT_TARGET: 'only the targeted {scope} domain qualifies, and none '
                    'of its hosts passed',
    }

    def conflict(self, policy: Policy, other: Policy):
        if (other.type is PolicyType.AFFINITY and policy.scope == other.scope
                and policy.identifier and other.identifier
                and policy.identifier != other.identifier):
            return 'target two different domains of one scope'
        return super().conflict(policy, other)

    def check(self, item: base.Item,
              ctx: PlacementContext) -> typing.Optional[HostCheck]:
        label = item.label
        scope = item.scope
        names = ctx.topology.domain_name
        if item.identifier is not None:
            target = ctx.target(item.policy, item.field)
            target_name = names(target)

            def in_target(host: str, domain: str):
                if domain != target:
                    return reasons.Reason(
                        NOT_TARGET, label, scope,
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
                NOT_WITH_MEMBERS, label, scope,
                f'{label}: {name} holds none of the {placed} placed '
                f'member(s) (they are in {where})',
                domain=name, count=0, limit=placed)

        if scope == HOST_SCOPE:
            return hosts_check(frozenset(counts), reason, allowed=True)

        def on_domain(host: str, domain: str):
            return None if domain in counts else reason(domain)
        return ctx.locate(scope, label, on_domain)

    def constraint(self, item: base.Item, ctx: PlacementContext
                   ) -> typing.Optional[base.Constraint]:
        if item.identifier is not None:
            target = ctx.target(item.policy, item.field)
            return base.Constraint(required=frozenset({target}),
                                   why=f'{item.label}: in {[target]}')
        counts = ctx.counts(item.scope)
        if ctx.placed and counts:
            return base.Constraint(
                required=frozenset(counts),
                why=f'{item.label}: in {sorted(counts)}')
        return None

    def audit(self, item: base.Item, view: base.AuditView
              ) -> typing.List[str]:
        start = view.begin(item)
        if start.done:
            return start.found
        found, by_domain, target = start.found, start.by_domain, start.target
        dname = view.topology.domain_name
        if target is not None:
            outside = [m for m in view.placed if m not in by_domain[target]]
            if outside:
                found.append(f'{item.label}: {view.listed(outside)} not in '
                             f'{dname(target)}')
        elif len(by_domain) > 1:
            spread = ', '.join(sorted(dname(d) for d in by_domain))
            found.append(f'{item.label}: members are in {len(by_domain)} '
                         f'domains ({spread})')
        return found

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        scope, m = item.scope, model.m
        union = clause.servers
        if item.identifier is not None:
            model.forbid(union, lambda ti: model.domain(ti, scope)
                         == item.identifier)
            return
        fixed = model.fixed_domains(clause, scope)
        nonempty = sum(1 for p in clause.parts if p) + bool(fixed)
        if clause.across and nonempty < 2:
            return
        if fixed:
            if len(fixed) > 1:
                raise base.Infeasible('the existing servers are apart')
            (only,) = fixed
            model.forbid(union, lambda ti: model.domain(ti, scope) == only)
            return
        choose = {}
        for domain, xs in model.by_domain(union, scope).items():
            choose[domain] = m.NewBoolVar('')
            for x in xs:
                m.AddImplication(x, choose[domain])
        m.Add(sum(choose.values()) <= 1)
