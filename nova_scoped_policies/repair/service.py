"""The one way a repair is planned: the cloud as records in, a plan out.

Pure (no nova, HTTP or CONF), as :mod:`nova_scoped_policies.stacks.
service` is for stacks: the policy API (``api/repairs.py``), Watcher
(``watcher/world.py``) and the simulator (``simulator/handlers/
repair.py``) each only read their world into a :class:`Cloud` and call::

    outcome = service.plan(read, asked, who, time_limit=10.0)
    outcome.plan           # planner.Plan: ordered moves, or why not
    outcome.assembled      # what it was planned on (targets, owners, ...)

``read(wide)`` returns the cloud; :func:`plan` reads it narrow first (the
asked groups and stacks with their own servers, the hosts that could
take them: what a reader that pays for each read reads cheaply) and wide
only when that plan is neither ``nothing to do`` nor one move and the
first read was not wide already (every server that may make room, every
group and stack). A reader with the whole world at hand returns it wide
at once.

:func:`assemble` makes the planner's problem of a cloud:

* **Targets**: the groups and stacks asked for (one, or every one);
  another project's is answered :class:`NotFound` unless the caller is
  an administrator. A stack is read with its tenant's identifiers made
  real; one that cannot be read any more is :class:`Unreadable` when
  asked for by id, and otherwise left out with a warning.
* **Bystanders**: every other server of the cloud the plan may move to
  make room, keeping every hard policy of its own groups and stacks (the
  cloud's other groups and stacks: the planner's ``kept``); a bystander
  on a host that is not the cloud's (down, or out of scope) is left out.
* **Servers that may not move** (:attr:`Server.movable` False) stay on
  their host: they require a trait only their host has.
"""

import dataclasses
import logging
import typing

from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.repair import planner
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks.world import World
from nova_scoped_policies.topology import Topology

LOG = logging.getLogger(__name__)

GROUP = 'server_group'
STACK = 'stack'
ALL = 'all'
STAYS = 'CUSTOM_NSP_REPAIR_KEPT_'
"""Prefix of the trait that keeps a server that may not move on its host:
the server requires it and only its host has it (never leaves a
problem)."""


@dataclasses.dataclass(frozen=True)
class Asked:
    """What a caller asks to repair.

    :param kind: ``server_group``, ``stack`` or ``all``.
    :param id: the group's or stack's id (None for all).
    """

    kind: str = ALL
    id: typing.Optional[str] = None

    @property
    def label(self) -> str:
        """``server_group <id>``, ``stack <id>`` or ``all``."""
        return f'{self.kind} {self.id}' if self.id else self.kind


@dataclasses.dataclass(frozen=True)
class Who:
    """Who asks.

    :param project: the caller's project.
    :param admin: an administrator (may repair any project's target and
        every target at once).
    """

    project: str = ''
    admin: bool = False


ADMIN = Who('', True)
"""An operator's tool (Watcher, the simulator): every target."""


@dataclasses.dataclass(frozen=True)
class Group:
    """A server group with scoped policies.

    :param id: its id.
    :param project: its project.
    :param document: its policies (real domain ids).
    :param members: the ids of the servers its policies count (those
        that do not run are counted nowhere).
    """

    id: str
    project: str
    document: PolicyDocument
    members: typing.Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Stack:
    """A stack decision.

    :param id: its id.
    :param project: its project.
    :param document: the stack document as stored (``{"stack": ...}``,
        its tenant's identifiers).
    :param instances: server name -> the id of the server booted for it.
    :param servers: existing server id -> its host, for the servers its
        relationships name (:func:`existing`).
    :param groups: existing group id -> the hosts of its members, for the
        groups its relationships name.
    """

    id: str
    project: str
    document: typing.Mapping[str, typing.Any]
    instances: typing.Mapping[str, str] = dataclasses.field(
        default_factory=dict)
    servers: typing.Mapping[str, typing.Optional[str]] = dataclasses.field(
        default_factory=dict)
    groups: typing.Mapping[str, typing.Tuple[str, ...]] = dataclasses.field(
        default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Server:
    """A server that runs.

    :param id: its id.
    :param host: where it runs.
    :param resources: what it uses there.
    :param project: its project ('' when unknown).
    :param required: traits its host must have.
    :param forbidden: traits its host must not have.
    :param movable: it may be live-migrated (False: it stays where it is,
        its capacity taken there).
    """

    id: str
    host: str
    resources: typing.Mapping[str, int]
    project: str = ''
    required: typing.FrozenSet[str] = frozenset()
    forbidden: typing.FrozenSet[str] = frozenset()
    movable: bool = True


@dataclasses.dataclass(frozen=True)
class Cloud:
    """The world a repair reads.

    :param hosts: the hosts a server may go to, with the capacity left
        now (every allocation and hold counted) and their traits.
    :param servers: server id -> the server, at least the targets'
        servers that run; any other is a bystander.
    :param groups: the groups read: at least those asked for; the others
        are kept by any move of a bystander.
    :param stacks: the stack decisions read, likewise.
    :param topology: the scopes and their domains (real ids).
    :param wide: nothing wider to read: every server that may make room
        and every group and stack is in it.
    """

    hosts: typing.Tuple[planner.Host, ...]
    servers: typing.Mapping[str, Server]
    groups: typing.Tuple[Group, ...]
    stacks: typing.Tuple[Stack, ...]
    topology: Topology
    wide: bool = True


class NotFound(Exception):
    """No such group or stack of the caller's (another project's is
    answered so too)."""

    def __init__(self, asked: Asked) -> None:
        self.asked = asked
        what = 'server group' if asked.kind == GROUP else 'stack decision'
        super().__init__(f'{what} {asked.id} not found')


class Unreadable(Exception):
    """The stack asked for cannot be read any more (a scope or domain it
    names is gone).

    :param reason: the parser's, in the stack's tenant's words.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclasses.dataclass(frozen=True)
class Assembled:
    """The planner's problem of a cloud, and what a caller needs to show
    its plan.

    :param problem: the planner's problem.
    :param owners: target id -> its project.
    :param names: server id -> how its target names it (a stack's server
        name, else the server id).
    :param projects: server id -> its project ('' when unknown), every
        server of the problem and of the targets.
    """

    problem: planner.Problem
    owners: typing.Mapping[str, str]
    names: typing.Mapping[str, str]
    projects: typing.Mapping[str, str]


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A repair plan and what it was made on."""

    assembled: Assembled
    plan: planner.Plan


def existing(document: typing.Mapping[str, typing.Any]
             ) -> typing.Tuple[typing.Tuple[str, ...],
                               typing.Tuple[str, ...]]:
    """(server ids, group ids) a stored stack's relationships name: the
    ends a reader puts in :attr:`Stack.servers` and :attr:`Stack.groups`;
    none when the document cannot be read (:func:`assemble` says why)."""
    try:
        stack = model.parse(document)
    except model.StackError:
        return (), ()
    return stack.existing('server'), stack.existing('server_group')


def _stack_target(record: Stack, topology: Topology) -> planner.Target:
    """:raises model.StackError, PolicyError: it cannot be read."""
    stack = model.with_real_ids(model.parse(record.document), topology,
                                record.project)
    return planner.Target.stack(
        record.id, stack,
        World((), topology, dict(record.servers), dict(record.groups)),
        record.instances)


def chosen(asked: Asked, kind: str, id: str) -> bool:
    """``asked`` names the group or stack ``id`` of ``kind`` (or every
    one)."""
    return asked.kind == ALL or (asked.kind == kind and asked.id == id)


def assemble(cloud: Cloud, asked: Asked, who: Who,
             bystanders: bool = True) -> Assembled:
    """The planner's problem of ``cloud`` for what ``who`` asks.

    :param bystanders: the servers of no target may move to make room
        (False: they are left out).
    :raises NotFound: the group or stack asked for is not in the cloud,
        or is another project's and ``who`` is no administrator (or, for
        every target, one of them is).
    :raises Unreadable: the stack asked for cannot be read any more.
    """
    topology = cloud.topology
    targets: typing.List[planner.Target] = []
    kept: typing.List[planner.Target] = []
    owners: typing.Dict[str, str] = {}
    names: typing.Dict[str, str] = {}
    for group in cloud.groups:
        target = planner.Target.group(group.id, group.document,
                                      group.members)
        if not chosen(asked, GROUP, group.id):
            kept.append(target)
            continue
        if group.project != who.project and not who.admin:
            raise NotFound(asked)
        targets.append(target)
        owners[group.id] = group.project
        names.update((m, m) for m in group.members)
    for stack in cloud.stacks:
        mine = chosen(asked, STACK, stack.id)
        if mine and stack.project != who.project and not who.admin:
            raise NotFound(asked)
        try:
            target = _stack_target(stack, topology)
        except (model.StackError, PolicyError) as exc:
            if asked.kind == STACK and mine:
                raise Unreadable(str(exc))
            # one stack whose scope or domain is gone stops no other repair
            LOG.warning('Stack decision %s cannot be read any more and is '
                        'left out of the repair: %s', stack.id, exc)
            continue
        if not mine:
            kept.append(target)
            continue
        targets.append(target)
        owners[stack.id] = stack.project
        names.update((u, n) for n, u in stack.instances.items())
    if asked.kind != ALL and not targets:
        raise NotFound(asked)
    servers, hosts = _servers(cloud, targets, kept if bystanders else None)
    projects = {sid: cloud.servers[sid].project for sid in servers}
    for target in targets:
        for sid in target.servers:
            projects.setdefault(sid, owners[target.id])
    return Assembled(
        planner.Problem(hosts, servers, tuple(targets), topology,
                        tuple(kept) if bystanders else ()),
        owners, names, projects)


def _servers(cloud: Cloud, targets: typing.Sequence[planner.Target],
             kept: typing.Optional[typing.Sequence[planner.Target]]
             ) -> typing.Tuple[typing.Dict[str, planner.Server],
                               typing.Tuple[planner.Host, ...]]:
    """(the planner's servers, its hosts): the targets' servers that run,
    and with ``kept`` every other server on a host of the cloud; a server
    that may not move requires a trait only its host has."""
    mine = {s for t in targets for s in t.servers}
    here = {h.name for h in cloud.hosts}
    stays: typing.Dict[str, typing.Set[str]] = {}
    found: typing.Dict[str, planner.Server] = {}
    for sid in sorted(cloud.servers):
        server = cloud.servers[sid]
        if sid not in mine and (kept is None or server.host not in here):
            continue
        required = server.required
        if not server.movable:
            trait = STAYS + ''.join(c for c in sid.upper() if c.isalnum())
            required = required | {trait}
            stays.setdefault(server.host, set()).add(trait)
        found[sid] = planner.Server(sid, server.host, server.resources,
                                    required, server.forbidden)
    hosts = tuple(dataclasses.replace(h, traits=h.traits | stays[h.name])
                  if h.name in stays else h for h in cloud.hosts)
    return found, hosts


def plan(read: typing.Callable[[bool], Cloud], asked: Asked, who: Who,
         time_limit: float = 10.0, workers: int = 1,
         bystanders: bool = True) -> Outcome:
    """The fewest moves that end every hard violation of what ``who``
    asks, other servers moved to make room where that takes fewer moves
    or is the only way.

    :param read: ``read(wide)``: the cloud now (narrow or wide).
    :param time_limit: seconds for one plan.
    :param workers: CP-SAT workers (one: the same inputs, the same plan).
    :param bystanders: see :func:`assemble`.
    :raises NotFound, Unreadable: see :func:`assemble`.
    :raises solver.SolverUnavailable: OR-Tools is not installed.
    """
    cloud = read(False)
    first = assemble(cloud, asked, who, bystanders)
    found = planner.plan(first.problem, time_limit, workers)
    if cloud.wide or not bystanders or found.status == planner.NOTHING or (
            found.status == planner.REPAIRED and len(found.moves) <= 1):
        return Outcome(first, found)
    wide = assemble(read(True), asked, who, bystanders)
    if len(wide.problem.servers) == len(first.problem.servers):
        return Outcome(first, found)
    return Outcome(wide, planner.plan(wide.problem, time_limit, workers))
