"""The one contract a policy plugin implements.

A plugin (one directory under ``engine/plugins/``) is the only home of a
policy type's (or rule's) meaning:

* its word and how its argument reads (:meth:`PolicyTypePlugin.parse`),
  the rules it owns (:attr:`PolicyPlugin.rules`, :class:`Rule`) and the
  policies it contradicts (:meth:`PolicyPlugin.conflict`);
* for each :class:`Item` of a document it owns (:meth:`PolicyPlugin.items`)
  its host check (hard) or host weight (soft), from the request's shared
  :class:`~nova_scoped_policies.engine.context.PlacementContext`;
* its Placement constraint (:class:`Constraint`);
* its audit verdict over placed members (:class:`AuditView`);
* the scopes and domains it can tell apart (``distinguishes``);
* its encoding in the joint solver (:meth:`PolicyPlugin.encode` over a
  :class:`JointModel`);
* its reason codes and the sentence that sums each up (:attr:`codes`);
* the nova filter (:attr:`filter`) or weigher (:attr:`weigher`) that
  carries it in nova-scheduler.

The parser, the engine, ``placement_query``, ``audit``, the solver, the
reasons' summary and the nova filters and weighers only loop over the
registry (``registry.py``).
"""

import abc
import dataclasses
import typing

from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.policy import names
from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.errors import shown
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


@dataclasses.dataclass(frozen=True)
class Rule:
    """A rule a plugin owns: ``<prefix><scope>``, an integer.

    :param prefix: the key's start (``max_skew_``).
    :param types: the policy words of which one must be on the rule's
        scope, untargeted, for the rule to apply; empty when it needs
        none.
    :param low: smallest value.
    :param high: largest value.
    :param by_policy: the key ends in a policy, not a scope
        (``weight_<policy>``): its values are ``Rules.weights``.
    """

    prefix: str
    types: typing.Tuple[str, ...] = ()
    low: int = 1
    high: int = names.MAX_INT
    by_policy: bool = False

    def check(self, scope: str, value: int,
              policies: typing.Sequence[Policy], rules: Rules
              ) -> typing.Optional[str]:
        """Why the rule cannot apply beside ``policies`` and ``rules``,
        or None."""
        if self.types and not any(
                p.type.value in self.types and p.scope == scope
                and p.identifier is None for p in policies):
            return 'needs the policy ' + ' or '.join(
                f'{t}:{scope}' for t in self.types)
        return None


class JointModel(typing.Protocol):
    """What the joint solver (``stacks/solver.py``) gives a plugin's
    :meth:`PolicyPlugin.encode`: OR-Tools CP-SAT variables of one stack
    (``m`` is the ``CpModel``), grouped the ways policies read them.
    A domain key is a domain id, a host name for the host scope, or a
    placeholder for a host in no domain.
    """

    m: typing.Any
    topology: Topology

    def by_domain(self, names: typing.Iterable[str], scope: str
                  ) -> typing.Dict[typing.Any, typing.List[typing.Any]]:
        """domain -> the booleans "server of ``names`` goes there"."""

    def present(self, names: typing.Tuple[str, ...], scope: str
                ) -> typing.Dict[typing.Any, typing.Any]:
        """domain -> a boolean: some server of ``names`` is in it."""

    def fixed_domains(self, clause: typing.Any, scope: str
                      ) -> typing.Counter:
        """domain -> existing servers of the clause in it."""

    def forbid(self, names: typing.Iterable[str],
               keep: typing.Callable[[typing.Any], bool]) -> None:
        """Servers of ``names`` only go where ``keep(domain_of_slot)``:
        ``keep`` takes the slot index; see :meth:`domain`."""

    def domain(self, slot: int, scope: str) -> typing.Any:
        """The domain key of a slot in ``scope``."""

    def outside_domain(self, key: typing.Any) -> bool:
        """Is ``key`` (of :meth:`by_domain`) the placeholder of a host in
        no domain of the scope?"""

    def outside(self, names: typing.Iterable[str], scope: str
                ) -> typing.List[typing.Any]:
        """The booleans "server of ``names`` goes to a host in no domain
        of ``scope``"."""

    def host_of(self, slot: int) -> str:
        """The host of a slot."""

    def add_cost(self, terms: typing.Iterable[typing.Any],
                 weight: int = 1) -> None:
        """Add ``weight`` times each term to the objective (minimised)."""


class Infeasible(Exception):
    """Raised by :meth:`PolicyPlugin.encode` when the item cannot be met
    whatever the decision (e.g. existing servers already break it)."""


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

    :param name: the family name; checks are grouped by it.
    :param hard: True for a constraint (host check), False for a
        preference (host weight).
    """

    name: str = ''
    hard: bool = True
    rules: typing.Tuple[Rule, ...] = ()
    """The rules it owns."""
    codes: typing.Mapping[str, str] = {}
    """Its reason codes -> the sentence that sums up a host's rejection
    for a tenant (``engine.reasons.summary``), with ``{all}``, ``{n}``,
    ``{scope}``, ``{count}`` and ``{limit}``."""
    filter: typing.Optional[str] = None
    """The nova filter family that runs its checks (``affinity``,
    ``anti-affinity``: ``scheduler/filters``); hard plugins only."""
    weigher: typing.Optional[str] = None
    """The nova weigher that adds its weights (``soft-affinity``,
    ``soft-anti-affinity``: ``scheduler/weights``); soft plugins only."""
    host_constraint: bool = False
    """Its host-scope items have an aggregate constraint too (a licence:
    the aggregates that declare it); a placement policy's host scope has
    none, a host being no aggregate."""
    reads_candidates: bool = False
    """Its check or weight depends on which hosts are candidates
    (:meth:`PlacementContext.eligible`)."""

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
        aggregate-backed scope (not ``host``, unless the plugin's
        :attr:`host_constraint` says so); None when it has none.

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

    def against(self, item: Item, view: AuditView, member: str) -> bool:
        """Whether a soft policy's placed ``member`` is where the policy
        would rather it were not (the resilience report's ``soft``
        count); hard policies and rules answer False: their audit says
        what they forbid.

        :param item: one of this plugin's items.
        :param view: where the members are.
        :param member: a placed member.
        """
        return False

    def encode(self, item: Item, clause: typing.Any, rules: Rules,
               model: JointModel) -> None:
        """Add the item to a stack's joint model: a hard item as
        constraints, a soft one as cost (``model.add_cost``, times its
        weight).

        :param item: one of this plugin's items.
        :param clause: the stack's clause it belongs to
            (``stacks.clauses.Clause``: its servers, parts and fixed
            hosts).
        :param rules: the clause's rules.
        :param model: the solver's variables.
        :raises Infeasible: it cannot be met whatever the decision.
        """
        raise NotImplementedError(f'{item.label}: no joint model')

    def host_key(self, item: Item, topology: Topology
                 ) -> typing.Optional[typing.Callable[[str], typing.Any]]:
        """What, besides its domains, the item reads of a host, as a
        function of the host name (the solver only merges hosts alike
        in it); None when nothing."""
        return None

    def cap(self, item: Item, rules: Rules) -> typing.Optional[int]:
        """The most members any one domain of the item's scope may hold,
        if the item says (the solver merges hosts up to it); None."""
        return None

    nova_policy: bool = False
    """Its word is one of nova's own server group policies (at the host
    scope nova's group means it; nova-compute checks the hard ones again
    at the claim, so their host-scope boots need no lock)."""

    def placement_traits(self, item: Item) -> typing.Tuple[str, ...]:
        """The Placement traits whose hosts ``item`` reads in the topology
        (``Topology.with_traits``): nova-scheduler asks Placement which
        hosts carry them. None by default."""
        return ()

    def needs_members(self, policy: Policy) -> bool:
        """Whether ``policy`` reads a group's members (a scheduler hint
        naming it needs a server group): yes, unless it targets a domain.
        """
        return policy.identifier is None

    def counts_union(self, policy: Policy, rules: Rules) -> bool:
        """Whether, on a group of groups or a relationship, the policy
        counts every server of it (True) or only sets member groups
        apart or together (False, the default)."""
        return False

    def conflict(self, policy: Policy, other: Policy
                 ) -> typing.Optional[str]:
        """Why ``policy`` (of this plugin) and ``other`` cannot stand in
        one document, worded to follow "they ...", or None. Asked both
        ways round. The default: policies of opposite families
        (:attr:`PolicyType.attracts`) on the same place.
        """
        if policy.scope != other.scope \
                or policy.identifier != other.identifier:
            return None
        mine, theirs = policy.type.attracts, other.type.attracts
        if None not in (mine, theirs) and mine != theirs:
            return 'ask for affinity and anti-affinity in the same place'
        return None

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

    def parse(self, parts: typing.Sequence[str], text: str,
              field: str) -> Policy:
        """The policy ``text`` (split on its first two ``:``) means.
        The default reads ``TYPE[:SCOPE[:IDENTIFIER]]``.

        :raises PolicyError: naming ``field``.
        """
        scope = HOST_SCOPE
        if len(parts) > 1:
            scope = parts[1]
            if not names.SCOPE_RE.match(scope):
                raise PolicyError(field, text,
                                  f'invalid scope {shown(scope)}: a scope '
                                  'name is 1-64 letters, digits, "_", "." '
                                  'or "-"')
        identifier = None
        if len(parts) > 2:
            identifier = parts[2]
            if not names.IDENTIFIER_RE.match(identifier):
                raise PolicyError(field, text, f'invalid identifier '
                                  f'{shown(identifier)}: expected a domain '
                                  'id')
        return Policy(self.policy_type, scope, identifier)

    def weighted(self, item: Item, rules: Rules,
                 terms: typing.Iterable[typing.Any],
                 model: JointModel) -> None:
        """A soft item's cost terms, times its ``weight_<policy>``."""
        model.add_cost(terms, rules.weight(item.label))

    def items(self, document: PolicyDocument) -> typing.List[Item]:
        return [Item(self.name, document.label_of(i), document.field_of(i),
                     p.scope, p)
                for i, p in enumerate(document.policies)
                if p.type is self.policy_type]
