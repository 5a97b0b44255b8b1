"""A stack after its decision: phase 5 of stack-document.md, "Live".

Pure (no nova, HTTP or CONF). From the decision until the stack is
deleted, its policies and relationships are what any server group's are:
every boot and move of one of its servers is checked and weighed by the
engine against the stack's other servers (:func:`requests`, the engine's
requests of :func:`nova_scoped_policies.stacks.clauses.member_requests`),
and the audit gives the verdicts of the policies' own plugins
(:func:`audit`, as a server group's audit): there is one home for what a
policy means.
"""

import dataclasses
import types
import typing

from nova_scoped_policies.engine import audit as audit_mod
from nova_scoped_policies.engine import Request
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.stacks import clauses as clauses_mod
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks.world import World
from nova_scoped_policies.topology import Topology

OK = 'ok'
VIOLATED = 'violated'
GROUP = 'group'
ACROSS = 'across'
RELATIONSHIP = 'relationship'


def requests(stack: model.Stack, world: World,
             placed: typing.Mapping[str, typing.Optional[str]],
             name: str,
             moving: typing.Mapping[str, typing.Iterable[str]] =
             types.MappingProxyType({})) -> typing.List[Request]:
    """The engine's requests for server ``name`` of a live stack.

    :param stack: the stack, real ids.
    :param world: its topology and the existing servers and server groups
        of its relationships (hosts are not read).
    :param placed: server name -> host for the stack's servers that have
        one (``name`` included on a move), decided hosts for servers still
        held.
    :param name: the server being booted or moved.
    :param moving: server name -> further hosts it holds while it moves.
    :raises model.StackError: a relationship names an existing server or
        server group the world does not know.
    """
    return clauses_mod.member_requests(
        clauses_mod.compile_stack(stack, world), world.topology, placed,
        name, moving)


@dataclasses.dataclass(frozen=True)
class PolicyAudit:
    """One document of the stack (a group's policies, the policies across
    a group of groups, a relationship) and how the servers keep it.

    :param field: where it is in the stack document.
    :param kind: ``group``, ``across`` or ``relationship``.
    :param policies: its policies and rules, as written.
    :param status: ``ok`` or ``violated`` (hard ones only can be).
    :param violations: what breaks it, in the words of the group audit
        (members are the stack's servers; across member groups, the
        member groups).
    """

    field: str
    kind: str
    policies: typing.Tuple[str, ...]
    status: str
    violations: typing.Tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {'field': self.field, 'kind': self.kind,
                'policies': list(self.policies), 'status': self.status,
                'violations': list(self.violations)}


@dataclasses.dataclass(frozen=True)
class StackAudit:
    """A stack's audit.

    :param servers: server name -> host (None: not placed).
    :param policies: one entry per document of the stack that has
        policies, in document order.
    """

    servers: typing.Mapping[str, typing.Optional[str]]
    policies: typing.Tuple[PolicyAudit, ...]

    @property
    def violations(self) -> typing.Tuple[str, ...]:
        return tuple(v for p in self.policies for v in p.violations)

    @property
    def status(self) -> str:
        return VIOLATED if self.violations else OK

    def to_dict(self) -> dict:
        return {'status': self.status, 'servers': dict(self.servers),
                'policies': [p.to_dict() for p in self.policies]}


def _kind(clause: clauses_mod.Clause) -> str:
    if clause.field.startswith('stack.relationships'):
        return RELATIONSHIP
    return ACROSS if clause.across else GROUP


def _apart(clause: clauses_mod.Clause, item, topology: Topology,
           placed: typing.Mapping[str, typing.Optional[str]]
           ) -> typing.Tuple[typing.Dict[str, str], typing.Dict[str, str]]:
    """For a limit between member groups (never within one): one member
    per member group and domain it uses, named by the group (the existing
    servers of a relationship are one such group). The plugin's audit of
    "at most one per domain" then reads "at most one member group".

    :returns: (member -> host, member -> name).
    """
    scope = item.scope
    members: typing.Dict[str, str] = {}
    names: typing.Dict[str, str] = {}
    ends = [(clause.names[i] if i < len(clause.names) else f'part {i}',
             [placed.get(s) for s in part])
            for i, part in enumerate(clause.parts)]
    if clause.fixed:
        ends.append((clause.names[-1] if len(clause.names) > len(
            clause.parts) else 'existing servers', list(clause.fixed)))
    for name, hosts in ends:
        for host in hosts:
            if not host:
                continue
            domains = ((host,) if scope == HOST_SCOPE else
                       topology.domains_of(scope, host)) or (f'@{host}',)
            for domain in domains:
                key = f'{name}#{domain}'
                members.setdefault(key, host)
                names[key] = name
    return members, names


def violations(clause: clauses_mod.Clause, topology: Topology,
               placed: typing.Mapping[str, typing.Optional[str]]
               ) -> typing.List[str]:
    """The clause's violations, in the words of its plugins' audits.

    :param clause: a clause of a stack (or any document over servers).
    :param topology: scopes and domains.
    :param placed: server -> host (None or absent: not placed).
    """
    union, pairs = clauses_mod.split(clause)
    servers = {s: placed.get(s) for s in clause.servers}
    fixed = clauses_mod.existing_members(clause)
    found: typing.List[str] = []
    if not union.empty or union.rules.max_server_per:
        found.extend(audit_mod.audit(union, topology,
                                     {**servers, **fixed}).violations)
    for plugin, item in registry.items(pairs):
        if not plugin.hard:
            continue
        alone = PolicyDocument((item.policy,), pairs.rules,
                               fields=pairs.fields, written=pairs.written)
        if plugin.cap(item, pairs.rules) is not None:
            members, names = _apart(clause, item, topology, placed)
            found.extend(audit_mod.audit(alone, topology, members,
                                         names.get).violations)
        else:
            found.extend(audit_mod.audit(alone, topology,
                                         {**servers, **fixed}).violations)
    return found


def audit(stack: model.Stack, world: World,
          placed: typing.Mapping[str, typing.Optional[str]]) -> StackAudit:
    """Every document of the stack against where its servers are, with the
    audit verdicts of the policies' own plugins (as a server group's
    audit): a leaf's policies over its servers; a group of groups' over
    its member groups (two servers of one member group never break it);
    a relationship's over its two ends.

    :param stack: the stack, real ids (or the viewer's: the caller may
        pass a topology and hosts in the identifiers its reader sees).
    :param world: its topology and existing servers and server groups.
    :param placed: server name -> host (None or absent: not placed).
    :raises model.StackError: a relationship names an existing server or
        server group the world does not know.
    """
    found = []
    for clause in clauses_mod.compile_stack(stack, world):
        broken = tuple(violations(clause, world.topology, placed))
        labels = tuple(item.label for _, item in
                       registry.items(clause.document))
        found.append(PolicyAudit(clause.field, _kind(clause), labels,
                                 VIOLATED if broken else OK, broken))
    servers = {s.name: placed.get(s.name) or None for s in stack.servers}
    return StackAudit(servers, tuple(found))
