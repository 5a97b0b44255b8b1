"""The one contract a policy plugin implements.

A plugin is the only home of a policy type's (or rule's) meaning. For each
:class:`Item` of a document it owns (see :meth:`PolicyPlugin.items`) it gives

* its host check (hard) or host weight (soft), from the request's shared
  :class:`~nova_scoped_policies.engine.context.PlacementContext`;
* its Placement aggregate constraint (:class:`Constraint`);
* its audit verdict over placed members (:class:`AuditView`);
* the scopes and domains it can tell apart (``distinguishes``);
* its structural meaning as a plain record (:class:`Structure`) a solver
  can compile without knowing the plugin.

The engine, ``placement_query`` and ``audit`` only fold over the plugins.
"""

import abc
import dataclasses
import enum
import typing

from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy.model import Rules
from nova_scoped_policies.topology import Topology


@dataclasses.dataclass(frozen=True)
class Item:
    """One policy or rule of a document, as its plugin sees it.

    :param family: the name of the plugin that owns it.
    :param label: how reasons and violations name it (``anti-affinity:rack``,
        ``min_domains_rack``).
    :param field: where it came from in the document, for errors.
    :param scope: the scope it is about.
    :param policy: the policy, or None for a rule.
    :param value: the rule's value (e.g. N of ``min_domains_S``), or None.
    """

    family: str
    label: str
    field: str
    scope: str
    policy: typing.Optional[Policy] = None
    value: typing.Optional[int] = None

    @property
    def identifier(self) -> typing.Optional[str]:
        """The targeted domain as the tenant wrote it, or None."""
        return self.policy.identifier if self.policy is not None else None


@dataclasses.dataclass(frozen=True)
class Constraint:
    """One item's aggregate constraint for ``GET /allocation_candidates``.

    :param required: one ``member_of=in:...`` entry (any of these), or
        None.
    :param forbidden: domains for ``member_of=!in:...``.
    :param why: one line for logs.
    """

    required: typing.Optional[typing.FrozenSet[str]] = None
    forbidden: typing.FrozenSet[str] = frozenset()
    why: str = ''


class Kind(str, enum.Enum):
    """The structural meaning of an item, for solvers."""

    AT_MOST_PER_DOMAIN = 'at-most-per-domain'
    """At most ``limit`` members in any one domain of ``scope``."""
    SAME_DOMAIN = 'same-domain'
    """All members in one domain of ``scope``."""
    IN_DOMAIN = 'in-domain'
    """Every member in the domain ``identifier`` of ``scope``."""
    NOT_IN_DOMAIN = 'not-in-domain'
    """No member in the domain ``identifier`` of ``scope``."""
    AT_LEAST_DOMAINS = 'at-least-domains'
    """Members (once all placed) use at least ``limit`` domains."""
    PREFER_TOGETHER = 'prefer-together'
    """Soft: the more members share a domain, the better."""
    PREFER_APART = 'prefer-apart'
    """Soft: the fewer members share a domain, the better."""

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class Structure:
    """An item as a pure constraint record a solver can compile.

    :param kind: what it means.
    :param scope: the scope it is about.
    :param hard: False for preferences (weights).
    :param limit: the number ``kind`` speaks of, if any.
    :param identifier: the targeted domain as written, if any.
    :param label: the item's label, for explanations.
    """

    kind: Kind
    scope: str
    hard: bool = True
    limit: typing.Optional[int] = None
    identifier: typing.Optional[str] = None
    label: str = ''


@dataclasses.dataclass(frozen=True)
class AuditView:
    """Where a group's members are, shared by every plugin's audit.

    :param topology: scopes and domains.
    :param rules: the document's rules.
    :param placed: member -> host, placed members only.
    :param where: scope -> domain -> members in it (the document's scopes).
    :param name: member id -> name for messages.
    :param target: item -> real domain id it targets; raises ValueError
        with the message to report.
    """

    topology: Topology
    rules: Rules
    placed: typing.Mapping[str, str]
    where: typing.Mapping[str, typing.Mapping[str, typing.List[str]]]
    name: typing.Callable[[str], str]
    target: typing.Callable[[Item], str]

    def listed(self, members: typing.Iterable[str]) -> str:
        return ', '.join(sorted(self.name(m) for m in members))

    def located(self, item: Item) -> typing.List[str]:
        """The violations every scoped hard policy shares: its scope must
        exist and each placed member's host be in exactly one of its
        domains. An undefined scope yields a single violation.
        """
        scope = item.scope
        if self.topology.scope(scope) is None:
            return [f'{item.label}: scope {scope} is not defined']
        found: typing.List[str] = []
        if scope == HOST_SCOPE:
            return found
        for member, host in sorted(self.placed.items()):
            domains = self.topology.domains_of(scope, host)
            if len(domains) != 1:
                what = ('no domain' if not domains else
                        f'{len(domains)} domains')
                found.append(f'{item.label}: {self.name(member)} runs on '
                             f'{host}, in {what} of scope {scope}')
        return found

    def begin(self, item: Item) -> 'AuditStart':
        """What the audit of every placement policy begins with: the
        violations of :meth:`located` and, when the scope exists, the
        members per domain and the domain the item targets (None when it
        targets none)."""
        found = self.located(item)
        if self.topology.scope(item.scope) is None:
            return AuditStart(found, done=True)
        target = None
        if item.identifier is not None:
            try:
                target = self.target(item)
            except ValueError as exc:
                return AuditStart(found + [f'{item.label}: {exc}'],
                                  done=True)
        return AuditStart(found, self.where[item.scope], target)


@dataclasses.dataclass
class AuditStart:
    """See :meth:`AuditView.begin`.

    :param found: the violations so far (the audit appends its own).
    :param by_domain: domain -> members in it, in the item's scope.
    :param target: the real domain the item targets, if any.
    :param done: nothing more to check (no such scope, unknown target).
    """

    found: typing.List[str]
    by_domain: typing.Mapping[str, typing.List[str]] = \
        dataclasses.field(default_factory=dict)
    target: typing.Optional[str] = None
    done: bool = False


Distinguished = typing.Mapping[str, typing.Optional[typing.FrozenSet[str]]]
"""scope -> the domains an item tells apart: None, every domain by its
identity (a policy that targets one); else the domains holding members,
which the item reads only through their member counts (two domains with
the same count behave alike, and a domain not listed like any other
without members)."""


class PolicyPlugin(abc.ABC):
    """The home of one policy type or rule.

    :param name: the family name; checks are grouped by it (filters select
        families) and weights by it (weighers select types).
    :param hard: True for a constraint (host check), False for a
        preference (host weight).
    """

    name: str = ''
    hard: bool = True

    @abc.abstractmethod
    def items(self, document: PolicyDocument) -> typing.List[Item]:
        """The items of ``document`` this plugin owns, in document order.

        :param document: the group's validated document.
        """

    def check(self, item: Item,
              ctx: PlacementContext) -> typing.Optional[HostCheck]:
        """The host check of a hard item (the scope is known).

        :param item: one of this plugin's items.
        :param ctx: the request's shared counts.
        :returns: a check, or None when it passes every host.
        :raises PolicyError: the item cannot apply (bad identifier).
        """
        return None

    def weight(self, item: Item, ctx: PlacementContext) -> HostWeight:
        """The raw host weight of a soft item (the scope is known).

        :param item: one of this plugin's items.
        :param ctx: the request's shared counts.
        :raises PolicyError: the item cannot apply (bad identifier).
        """
        return lambda host: 0.0

    def constraint(self, item: Item, ctx: PlacementContext
                   ) -> typing.Optional[Constraint]:
        """The aggregate constraint of an item whose scope is a known,
        aggregate-backed scope (not ``host``); None when it has none.

        It must only exclude hosts :meth:`check` rejects.

        :param item: one of this plugin's items.
        :param ctx: the request's shared counts.
        """
        return None

    def audit(self, item: Item, view: AuditView) -> typing.List[str]:
        """The item's violations by the placed members.

        :param item: one of this plugin's items.
        :param view: where the members are.
        """
        return []

    @abc.abstractmethod
    def structure(self, item: Item, rules: Rules) -> Structure:
        """The item as a solver's constraint record.

        :param item: one of this plugin's items.
        :param rules: the document's rules (limits).
        """

    def distinguishes(self, item: Item,
                      ctx: PlacementContext) -> Distinguished:
        """Which domains this item tells apart for this request
        (:data:`Distinguished`). The default is right for a plugin whose
        check, weight and constraint read a domain only through its member
        count, unless the item targets a domain; a plugin that reads more
        (a domain's name, its size) must say so with None.

        :param item: one of this plugin's items.
        :param ctx: the request's shared counts.
        """
        if item.scope == HOST_SCOPE:
            return {}
        if item.identifier is not None:
            return {item.scope: None}
        return {item.scope: frozenset(ctx.counts(item.scope))}


class PolicyTypePlugin(PolicyPlugin):
    """A plugin owning the policies of one :class:`PolicyType`."""

    policy_type: typing.Any = None

    def items(self, document: PolicyDocument) -> typing.List[Item]:
        return [Item(self.name, document.label_of(i), document.field_of(i),
                     p.scope, p)
                for i, p in enumerate(document.policies)
                if p.type is self.policy_type]
