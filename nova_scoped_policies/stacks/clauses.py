"""A stack's policies as clauses, and the engine's requests they make.

Pure, and free of any solver: the scheduler reads it for every boot and
move of a stack's servers (:mod:`.live`), the solver to build its model
and replay its decisions (:mod:`.solver`).
"""

import dataclasses
import functools
import types
import typing

from nova_scoped_policies.engine import Engine
from nova_scoped_policies.engine import Request
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.policy.model import MAX_SERVER_PER
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks.world import World
from nova_scoped_policies.topology import Topology


@dataclasses.dataclass(frozen=True)
class Clause:
    """One document applied to servers of the stack.

    :param document: the policies and rules.
    :param field: where they come from, for reasons.
    :param parts: the servers it relates, one tuple per member group (a
        leaf has one part: the policies apply within it).
    :param fixed: hosts of existing servers (a relationship's ``to``).
    :param across: the policies apply only between different parts (and
        the existing servers), never within one.
    :param names: the parts' names, for people (the member groups; a
        relationship's ends).
    """

    document: PolicyDocument
    field: str
    parts: typing.Tuple[typing.Tuple[str, ...], ...]
    fixed: typing.Tuple[str, ...] = ()
    across: bool = False
    names: typing.Tuple[str, ...] = ()

    @property
    def servers(self) -> typing.Tuple[str, ...]:
        return tuple(s for part in self.parts for s in part)

    @functools.cached_property
    def part_of(self) -> typing.Mapping[str, int]:
        """server name -> the index of its part (read for every server
        of every clause: made once)."""
        return {s: i for i, p in enumerate(self.parts) for s in p}

    @functools.cached_property
    def split(self) -> typing.Tuple[PolicyDocument, PolicyDocument]:
        """:func:`split` of the clause, made once."""
        return split(self)

    @functools.cached_property
    def items(self) -> typing.Tuple[typing.Tuple[base.PolicyPlugin,
                                                 base.Item], ...]:
        """The document's items with their plugins, made once."""
        return tuple(registry.items(self.document))

    @functools.cached_property
    def hard(self) -> bool:
        """Whether any of its items is hard (has a host check)."""
        return any(plugin.hard for plugin, _ in self.items)

    def counts_union(self, scope: str) -> bool:
        """Whether a limit at ``scope`` counts every server of the clause
        (a leaf, or an explicit ``max_server_per_<scope>`` on a group of
        groups) rather than the member groups present."""
        return (not self.across
                or scope in self.document.rules.max_server_per)


def compile_stack(stack: model.Stack, world: World) -> typing.List[Clause]:
    """Every leaf, group-of-groups and relationship document as a clause.

    :raises model.StackError: a relationship names an existing server or
        server group the world does not know.
    """
    clauses = []
    for group in stack.root.walk():
        if group.document.empty and not group.document.rules.max_server_per:
            continue
        if group.leaf:
            parts: typing.Tuple[typing.Tuple[str, ...], ...] = (
                tuple(s.name for s in group.servers),)
            names: typing.Tuple[str, ...] = (group.name,)
        else:
            parts = tuple(tuple(s.name for s in m.all_servers())
                          for m in group.members)
            names = tuple(m.name for m in group.members)
        clauses.append(Clause(group.document, group.field, parts,
                              across=not group.leaf, names=names))
    for rel in stack.relationships:
        source = tuple(s.name for s in stack.group(rel.source).all_servers())
        if isinstance(rel.target, model.Existing):
            if rel.target.kind == 'server':
                host = world.servers.get(rel.target.uuid, _MISSING)
                if host is _MISSING:
                    raise model.StackError(f'{rel.field}.to.server',
                                           'no such server')
                fixed = (host,) if host else ()
            else:
                hosts = world.server_groups.get(rel.target.uuid)
                if hosts is None:
                    raise model.StackError(f'{rel.field}.to.server_group',
                                           'no such server group')
                fixed = tuple(hosts)
            clauses.append(Clause(rel.document, rel.field, (source,),
                                  fixed, across=True,
                                  names=(rel.source,
                                         f'existing {rel.target.kind}')))
        else:
            target = tuple(
                s.name for s in stack.group(rel.target).all_servers())
            clauses.append(Clause(rel.document, rel.field,
                                  (source, target), across=True,
                                  names=(rel.source, rel.target)))
    return clauses


_MISSING = object()


def existing_members(clause: Clause) -> typing.Dict[str, str]:
    """The existing servers of a relationship as members: member key ->
    host. The keys hold a space, which no server name may (stack names
    match ``[A-Za-z0-9][A-Za-z0-9_.-]*``): they never meet a server."""
    return {f'existing #{i}': h for i, h in enumerate(clause.fixed)}


def items(clause: Clause
          ) -> typing.List[typing.Tuple[base.PolicyPlugin, base.Item]]:
    """The clause's items with their plugins."""
    return list(clause.items)


def split(clause: Clause) -> typing.Tuple[PolicyDocument, PolicyDocument]:
    """(items that count the whole clause, items between parts only):
    on a group of groups or a relationship, each policy's plugin says
    which (``counts_union``)."""
    doc = clause.document
    if not clause.across:
        return doc, PolicyDocument()
    rules = doc.rules
    whole = {p for p in doc.policies
             if registry.plugin_of(p.type).counts_union(p, rules)}
    union = tuple(p for p in doc.policies if p in whole)
    pairs = tuple(p for p in doc.policies if p not in whole)
    return (PolicyDocument(union, rules, fields=doc.fields,
                           written=doc.written),
            PolicyDocument(pairs, rules.without(MAX_SERVER_PER),
                           fields=doc.fields, written=doc.written))


def member_requests(clauses: typing.Sequence[Clause], topology: Topology,
                    placed: typing.Mapping[str, typing.Optional[str]],
                    name: str,
                    moving: typing.Mapping[str, typing.Iterable[str]] =
                    types.MappingProxyType({}),
                    hard_only: bool = False) -> typing.List[Request]:
    """The stack's policies for server ``name`` as the engine's requests,
    one per document that relates it to other servers: what any server
    group's request is, so the engine checks and weighs them as it does
    a group's (no second evaluator).

    For each clause holding ``name``: the items that count the whole
    clause (a leaf's policies, an explicit ``max_server_per_<scope>`` on a
    group of groups) with every other server of the clause as members;
    the items between member groups with the servers of the *other*
    member groups only; the existing servers of a relationship in both.

    :param clauses: the stack's clauses (:func:`compile_stack`).
    :param topology: scopes and domains, real ids.
    :param placed: server name -> its host (None or absent: unplaced).
        ``name`` itself may be there (a move): it is the request's
        instance and never counts against itself.
    :param name: the server being placed.
    :param moving: server name -> further hosts it occupies while it
        moves (its destination before its host changes): it counts there
        too, as the member it will be.
    :param hard_only: leave out the clauses with no hard item (for the
        host checks alone: they weigh, never reject).
    """
    found: typing.List[Request] = []
    for clause in clauses:
        part_of = clause.part_of
        if name not in part_of or (hard_only and not clause.hard):
            continue
        union_doc, pair_doc = clause.split
        fixed = existing_members(clause)
        # (member key, host, server): a moving server is also a member on
        # each further host it holds
        where = [(n, placed[n], n) for n in part_of if placed.get(n)]
        where += [(f'{n} -> {h}', h, n) for n in part_of if n != name
                  for h in moving.get(n, ()) if h]
        members = {key: host for key, host, _ in where}
        others = {key: host for key, host, n in where
                  if n == name or part_of[n] != part_of[name]}
        for doc, around in ((union_doc, members), (pair_doc, others)):
            if doc.empty and not doc.rules.max_server_per:
                continue
            found.append(Request(doc, topology, {**around, **fixed},
                                 instance_uuid=name))
    return found


def check_server(clauses: typing.Sequence[Clause], topology: Topology,
                 placed: typing.Mapping[str, str], name: str, host: str,
                 engine: typing.Optional[Engine] = None,
                 candidates: typing.Optional[typing.Callable[
                     [], typing.Collection[str]]] = None
                 ) -> typing.List[str]:
    """The engine's reasons why server ``name`` may not go on ``host``,
    given the servers of the stack ``placed`` (and the existing servers
    of the clauses); empty when it may.

    :param candidates: the hosts that would take the server, policies
        aside (its flavor fits), asked only by a policy that reads them
        (spread's eligible domains); None: every host.
    """
    engine = engine or Engine()
    found = []
    for request in member_requests(clauses, topology, placed, name,
                                   hard_only=True):
        evaluation = engine.prepare(request)
        for check in evaluation.checks_for(
                (), read_candidates(evaluation, candidates)):
            reason = check(host)
            if reason is not None:
                found.append(reason.message)
    return found


def read_candidates(evaluation, candidates: typing.Optional[typing.Callable[
        [], typing.Collection[str]]]
             ) -> typing.Optional[typing.Collection[str]]:
    """``candidates()`` when an item of ``evaluation`` reads them
    (``Evaluation.reads_candidates``), else None (every host): they cost a
    pass over the hosts."""
    if candidates is None or not evaluation.reads_candidates:
        return None
    return candidates()
