"""The min_domains_S rule: members must end up in at least N domains."""

import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.model import MIN_DOMAINS
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules

CODE = 'min-domains'
"""min_domains_S: the remaining members must go to domains not used yet."""


class MinDomainsRule(base.Rule):
    """``min_domains_<scope>``: needs ``size`` (N at most size), and no
    ``affinity:<scope>`` beside an N above 1."""

    def check(self, scope: str, value: int,
              policies: typing.Sequence[Policy], rules: Rules
              ) -> typing.Optional[str]:
        if rules.size is None:
            return ('needs rules.size, the number of members the group is '
                    'meant to have')
        if value > rules.size:
            return f'cannot spread {rules.size} member(s) over {value} ' \
                'domains'
        if value > 1 and any(p.type is PolicyType.AFFINITY
                             and p.scope == scope for p in policies):
            return (f'contradicts affinity:{scope}, which keeps every '
                    'member in one domain')
        return None


class MinDomains(base.PolicyPlugin):
    """With ``used`` domains holding members and ``remaining`` members still
    to place (this one included): if used < N and remaining <= N - used,
    the host must be in a domain that holds no member yet.
    """

    name = CODE
    filter = 'anti-affinity'
    rules = (MinDomainsRule(MIN_DOMAINS),)
    codes = {CODE: 'the members left must go to {scope} domains not used '
                   'yet, and none of those passed'}

    def items(self, document: PolicyDocument) -> typing.List[base.Item]:
        return [base.Item(self.name, f'{MIN_DOMAINS}{scope}',
                          f'rules.{MIN_DOMAINS}{scope}', scope, value=needed)
                for scope, needed in sorted(
                    document.rules.min_domains.items())]

    def check(self, item: base.Item,
              ctx: PlacementContext) -> typing.Optional[HostCheck]:
        scope = item.scope
        needed = item.value
        label = item.label
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
                CODE, label, scope,
                f'{label}: {name} already holds {counts[domain]} member(s); '
                f'the {remaining} member(s) left must go to domains not used '
                f'yet to reach {needed} (used: {used})',
                domain=name, count=used, limit=needed)
        return ctx.locate(scope, label, on_domain)

    def constraint(self, item: base.Item, ctx: PlacementContext
                   ) -> typing.Optional[base.Constraint]:
        if not ctx.min_domains_binds(item.scope):
            return None
        used = frozenset(ctx.counts(item.scope))
        if not used:
            return None
        return base.Constraint(
            forbidden=used,
            why=f'{item.label}={item.value}: !in {sorted(used)}')

    def audit(self, item: base.Item, view: base.AuditView
              ) -> typing.List[str]:
        used = len(view.where.get(item.scope, ()))
        size = view.rules.size
        if size is not None and len(view.placed) >= size \
                and used < item.value:
            return [f'{item.label}: {len(view.placed)} members use {used} '
                    f'domain(s) of {item.value}']
        return []

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        model.m.Add(sum(model.present(clause.servers, item.scope).values())
                    >= item.value)
