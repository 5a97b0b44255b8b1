"""spread:S with max_skew_S: Kubernetes' topology spread, per scope.

Placing a member on host h must leave
``(members in domain_S(h) + 1) - (fewest members in any eligible domain
of S) <= max_skew_S`` (default 1). Eligible domains are those with at
least one host that passed the request's other filters (Kubernetes'
``nodeAffinityPolicy: Honor``): in nova-scheduler, the hosts nova hands
the filter; without candidates (the audit, tools), every domain of S.
"""

import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules

PolicyType.SPREAD = PolicyType.define('spread', hard=True, attracts=False)
PolicyType.SOFT_SPREAD = PolicyType.define('soft-spread', hard=False,
                                           attracts=False)

MAX_SKEW = 'max_skew_'
DEFAULT_MAX_SKEW = 1
SKEW = 'skew'
"""spread:S: placing here would leave the domains further apart than
max_skew_S."""


def max_skew(rules: Rules, scope: str) -> int:
    """``max_skew_<scope>``, 1 when absent."""
    return rules.per_scope(MAX_SKEW).get(scope, DEFAULT_MAX_SKEW)


class SpreadPlugin(base.PolicyTypePlugin):
    """What spread and soft-spread share: the word takes a scope and no
    identifier, the ``max_skew_<scope>`` rule, one spread per scope, and
    counting every server of a group of groups (not the member groups)."""

    rules = (base.Rule(MAX_SKEW, types=('spread', 'soft-spread')),)

    def parse(self, parts: typing.Sequence[str], text: str,
              field: str) -> Policy:
        policy = super().parse(parts, text, field)
        if policy.identifier is not None:
            raise PolicyError(field, text, f'{self.name} takes a scope and '
                              'no domain identifier: it spreads over every '
                              'domain of the scope')
        return policy

    def conflict(self, policy: Policy, other: Policy):
        if policy.scope == other.scope and other.identifier is None \
                and other.type in (PolicyType.SPREAD,
                                   PolicyType.SOFT_SPREAD) \
                and other.type is not policy.type:
            return 'ask to spread over one scope twice'
        return super().conflict(policy, other)

    def counts_union(self, policy: Policy, rules: Rules) -> bool:
        return True

    def skew(self, clause, scope: str, model: base.JointModel):
        """(the most, the fewest) servers of the clause, existing ones
        included, in the domains where some server of it may go."""
        m = model.m
        fixed = model.fixed_domains(clause, scope)
        # hosts in no domain of the scope are in none of its domains
        counts = {d: sum(xs) + fixed.get(d, 0) for d, xs in
                  model.by_domain(clause.servers, scope).items()
                  if not model.outside_domain(d)}
        for domain, n in fixed.items():
            counts.setdefault(domain, n)
        total = len(clause.servers) + sum(fixed.values())
        most = m.NewIntVar(0, total, '')
        fewest = m.NewIntVar(0, total, '')
        for count in counts.values():
            m.Add(most >= count)
            m.Add(fewest <= count)
        return most, fewest


class Spread(SpreadPlugin):
    """Reject hosts whose domain would exceed the skew."""

    name = PolicyType.SPREAD.value
    policy_type = PolicyType.SPREAD
    filter = 'anti-affinity'
    reads_candidates = True
    codes = {SKEW: 'the {scope} domains left hold {count} member(s), more '
                   'than max {limit} above the fewest'}

    def check(self, item: base.Item,
              ctx: PlacementContext) -> typing.Optional[HostCheck]:
        scope, label = item.scope, item.label
        limit = max_skew(ctx.rules, scope)
        counts = ctx.counts(scope)
        fewest = ctx.fewest(scope)
        if not counts:
            return ctx.locate(scope, label, lambda host, domain: None)
        names = ctx.topology.domain_name

        def on_domain(host: str, domain: str):
            here = counts.get(domain, 0)
            if here + 1 - fewest <= limit:
                return None
            name = names(domain)
            return reasons.Reason(
                SKEW, label, scope,
                f'{label}: {name} holds {here} member(s) and the fewest in '
                f'an eligible {scope} domain is {fewest}; one more would '
                f'make the skew {here + 1 - fewest}, above max {limit}',
                domain=name, count=here, limit=limit)
        return ctx.locate(scope, label, on_domain)

    def audit(self, item: base.Item, view: base.AuditView
              ) -> typing.List[str]:
        start = view.begin(item)
        if start.done:
            return start.found
        scope = item.scope
        limit = max_skew(view.rules, scope)
        counts = {d: len(m) for d, m in start.by_domain.items()}
        if not counts:
            return start.found
        if scope == HOST_SCOPE:
            # as the check without candidates: some host holds no member
            fewest = 0
        else:
            domains = {d.id for d in view.topology.domains(scope) if d.hosts}
            if not domains:
                return start.found
            fewest = min(counts.get(d, 0) for d in domains)
        most = max(counts.values())
        if most - fewest > limit:
            dname = view.topology.domain_name
            full = max(counts, key=lambda d: (counts[d], d))
            start.found.append(
                f'{item.label}: {dname(full)} holds {most} member(s), the '
                f'fewest in a {scope} domain is {fewest}: skew '
                f'{most - fewest} of max {limit}')
        return start.found

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        most, fewest = self.skew(clause, item.scope, model)
        model.m.Add(most - fewest <= max_skew(rules, item.scope))
