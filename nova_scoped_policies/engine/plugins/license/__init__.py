"""license:PRODUCT: Licensed Product Presence (heat-policy-extension.txt).

Hosts that may run PRODUCT are those of an aggregate whose metadata says
``license:PRODUCT=allowed`` and those that carry the trait
``CUSTOM_LICENSE_<PRODUCT>`` (``Topology.licensed``); every other host is
rejected. PRODUCT is 1-64 letters, digits and ``_``, compared without
case.
"""

import re
import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import hosts_check
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.errors import shown
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules
from nova_scoped_policies.topology.model import LICENSE_TRAIT

PolicyType.LICENSE = PolicyType.define('license', hard=True, attracts=None)

_PRODUCT_RE = re.compile(r'[A-Za-z0-9_]{1,64}\Z')
NOT_LICENSED = 'not-licensed'
"""license:P: the host may not run P."""


class ProductPlugin(base.PolicyTypePlugin):
    """A type whose word reads ``TYPE:PRODUCT``."""

    def parse(self, parts: typing.Sequence[str], text: str,
              field: str) -> Policy:
        product = ':'.join(parts[1:]) if len(parts) > 1 else ''
        if not _PRODUCT_RE.match(product):
            raise PolicyError(field, text, f'expected {self.name}:PRODUCT, '
                              'PRODUCT being 1-64 letters, digits or "_"; '
                              f'got {shown(product or None)}')
        return Policy(self.policy_type, HOST_SCOPE, None, product.upper())

    def needs_members(self, policy: Policy) -> bool:
        return self.name != License.name

    def placement_traits(self, item: base.Item) -> typing.Tuple[str, ...]:
        """Hosts with ``CUSTOM_LICENSE_<PRODUCT>`` may run the product."""
        return (LICENSE_TRAIT + item.policy.argument,)


class License(ProductPlugin):
    """Pass iff the host is licensed for the product."""

    name = PolicyType.LICENSE.value
    policy_type = PolicyType.LICENSE
    filter = 'affinity'
    host_constraint = True
    codes = {NOT_LICENSED: '{all}{n} hosts left are not licensed for it'}

    def check(self, item: base.Item,
              ctx: PlacementContext) -> typing.Optional[HostCheck]:
        product = item.policy.argument
        licensed = ctx.topology.licensed(product)
        reason = reasons.Reason(
            NOT_LICENSED, item.label, HOST_SCOPE,
            f'{item.label}: the host is not licensed for {product} (no '
            f'aggregate with license:{product}=allowed, no trait '
            f'CUSTOM_LICENSE_{product})')
        return hosts_check(licensed, lambda host: reason, allowed=True)

    def constraint(self, item: base.Item, ctx: PlacementContext
                   ) -> typing.Optional[base.Constraint]:
        product = item.policy.argument
        aggregates = ctx.topology.licence_aggregates(product)
        if ctx.topology.licensed_by_trait(product) - \
                ctx.topology.licensed_by_aggregate(product):
            return None     # Placement cannot say "this aggregate or trait"
        return base.Constraint(required=frozenset(aggregates),
                               why=f'{item.label}: in {sorted(aggregates)}')

    def host_key(self, item: base.Item, topology):
        licensed = topology.licensed(item.policy.argument)
        return licensed.__contains__

    def audit(self, item: base.Item, view: base.AuditView
              ) -> typing.List[str]:
        licensed = view.topology.licensed(item.policy.argument)
        outside = [m for m, h in view.placed.items() if h not in licensed]
        if not outside:
            return []
        return [f'{item.label}: {view.listed(outside)} on hosts not '
                f'licensed for {item.policy.argument}']

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        licensed = model.topology.licensed(item.policy.argument)
        model.forbid(clause.servers,
                     lambda ti: model.host_of(ti) in licensed)
