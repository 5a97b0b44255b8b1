"""The repair planner: plain data in, an ordered plan of moves out.

A :class:`Problem` is the cloud as a plan reads it: hosts with the
capacity left now (every allocation counted, holds of stack decisions
too), traits, the servers with their host and what they use, and the
targets (server groups, stacks) whose hard policies must hold, each as the
clauses of :mod:`nova_scoped_policies.stacks.clauses` over server ids.

:func:`plan` repairs every target that has a hard violation, one
component at a time (targets that share servers are one component), in a
stable order, each with what the moves before it left:

1. **Where**: the joint solver of stacks picks the servers' hosts, every
   hard policy and every host's capacity met, moving the fewest servers;
   the soft policies' cost is the second objective
   (:func:`~nova_scoped_policies.stacks.solver.reassign`).
2. **In which order**: a move is taken when its destination has room left
   by the moves before it and it adds no violation (no more violations
   than before, no target broken that was not). When no move can be
   taken (a swap, or a chain through full hosts), one server goes to a
   free host first and on later: a *temporary* move.

When a target cannot be repaired the plan says which policy or resource
stops it and proposes nothing. :func:`greedy` is the baseline of the
benchmark: one violating server at a time, to the first host the filters
pass, as a descheduler and the scheduler would.
"""

import dataclasses
import time
import typing

from nova_scoped_policies.engine import Engine
from nova_scoped_policies.engine import join
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.stacks import clauses as clauses_mod
from nova_scoped_policies.stacks import live
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver
from nova_scoped_policies.stacks.world import HostState
from nova_scoped_policies.stacks.world import World
from nova_scoped_policies.topology import Topology

REPAIRED = 'repaired'
IMPOSSIBLE = 'impossible'
NOTHING = 'nothing to do'
GROUP = 'group'
STACK = 'stack'


@dataclasses.dataclass(frozen=True)
class Host:
    """A compute host as a plan reads it.

    :param name: the host name.
    :param free: resource class -> capacity left now (Placement's
        ``(total - reserved) x allocation ratio - used``: every server and
        every hold counted).
    :param traits: its traits.
    :param provider: its resource provider uuid, if known.
    """

    name: str
    free: typing.Mapping[str, int]
    traits: typing.FrozenSet[str] = frozenset()
    provider: str = ''


@dataclasses.dataclass(frozen=True)
class Server:
    """A server that runs, and may be moved.

    :param id: its id (the instance uuid).
    :param host: where it runs.
    :param resources: what it uses there.
    :param required: traits its host must have.
    :param forbidden: traits its host must not have.
    """

    id: str
    host: str
    resources: typing.Mapping[str, int]
    required: typing.FrozenSet[str] = frozenset()
    forbidden: typing.FrozenSet[str] = frozenset()


@dataclasses.dataclass(frozen=True)
class Target:
    """A server group or a stack whose hard policies a plan keeps.

    :param kind: ``group`` or ``stack``.
    :param id: its id.
    :param clauses: its documents over server ids.
    """

    kind: str
    id: str
    clauses: typing.Tuple[clauses_mod.Clause, ...]

    @classmethod
    def group(cls, id: str, document: PolicyDocument,
              members: typing.Iterable[str]) -> 'Target':
        """A server group: one document over its members (real ids)."""
        return cls(GROUP, id, (clauses_mod.Clause(
            document, 'policies', (tuple(members),), names=(id,)),))

    @classmethod
    def stack(cls, id: str, stack: model.Stack, world: World,
              instances: typing.Mapping[str, str]) -> 'Target':
        """A stack: its clauses (:func:`.clauses.compile_stack`) over the
        instances of its servers; a server with no instance has no part.

        :param instances: server name -> instance id.
        """
        found = []
        for clause in clauses_mod.compile_stack(stack, world):
            parts = tuple(tuple(instances[s] for s in part
                                if s in instances) for part in clause.parts)
            found.append(dataclasses.replace(clause, parts=parts))
        return cls(STACK, id, tuple(found))

    @property
    def servers(self) -> typing.FrozenSet[str]:
        return frozenset(s for c in self.clauses for s in c.servers)

    @property
    def label(self) -> str:
        return f'{self.kind} {self.id}'


@dataclasses.dataclass(frozen=True)
class Problem:
    """The cloud as a plan reads it.

    :param hosts: every host a server may go to.
    :param servers: server id -> server, at least those of the targets.
    :param targets: the groups and stacks to keep.
    :param topology: scopes and domains (real ids).
    """

    hosts: typing.Tuple[Host, ...]
    servers: typing.Mapping[str, Server]
    targets: typing.Tuple[Target, ...]
    topology: Topology


@dataclasses.dataclass(frozen=True)
class Move:
    """One live migration of a plan.

    :param server: the server's id.
    :param source: where it runs before the move.
    :param destination: where it goes.
    :param temporary: it makes room and moves on later in the plan.
    """

    server: str
    source: str
    destination: str
    temporary: bool = False

    def to_dict(self) -> dict:
        found = {'server': self.server, 'from': self.source,
                 'to': self.destination}
        if self.temporary:
            found['temporary'] = True
        return found


@dataclasses.dataclass(frozen=True)
class Plan:
    """A repair plan.

    :param status: ``repaired``, ``impossible`` or ``nothing to do``.
    :param moves: the moves, in the order to take them (none when
        impossible).
    :param reason: when impossible, which policy or resource stops it.
    :param seconds: time spent planning.
    :param before: the hard violations found, ``<target>: <violation>``.
    :param after: the violations the plan leaves (none when repaired).
    :param optimal: the solver proved each component's move count fewest.
    """

    status: str
    moves: typing.Tuple[Move, ...] = ()
    reason: str = ''
    seconds: float = 0.0
    before: typing.Tuple[str, ...] = ()
    after: typing.Tuple[str, ...] = ()
    optimal: bool = False

    def to_dict(self) -> dict:
        return {'status': self.status,
                'moves': [m.to_dict() for m in self.moves],
                'reason': self.reason, 'seconds': round(self.seconds, 3),
                'violations': list(self.before)}


class _State:
    """Where the servers are and what the hosts have left, as a plan
    goes."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.placed: typing.Dict[str, typing.Optional[str]] = {
            s.id: s.host for s in problem.servers.values()}
        self.free = {h.name: dict(h.free) for h in problem.hosts}
        self.hosts = {h.name: h for h in problem.hosts}

    def violations(self, targets: typing.Iterable[Target]
                   ) -> typing.List[str]:
        topology = self.problem.topology
        return [f'{t.label}: {v}' for t in targets for c in t.clauses
                for v in live.violations(c, topology, self.placed)]

    def broken(self, targets: typing.Iterable[Target]
               ) -> typing.Set[str]:
        topology = self.problem.topology
        return {t.id for t in targets
                if any(live.violations(c, topology, self.placed)
                       for c in t.clauses)}

    def fits(self, server: Server, host: str) -> bool:
        state = self.hosts.get(host)
        if state is None:
            return False
        if not server.required <= state.traits or \
                server.forbidden & state.traits:
            return False
        free = self.free[host]
        return all(free.get(rc, 0) >= n
                   for rc, n in server.resources.items() if n)

    def move(self, server: Server, host: str) -> str:
        source = self.placed[server.id]
        for rc, n in server.resources.items():
            if source in self.free:
                self.free[source][rc] = self.free[source].get(rc, 0) + n
            self.free[host][rc] = self.free[host].get(rc, 0) - n
        self.placed[server.id] = host
        return source

    def safe(self, server: Server, host: str,
             targets: typing.Sequence[Target]) -> bool:
        """Moving ``server`` to ``host`` adds no violation: no more than
        before, and no target broken that was not."""
        before = self.violations(targets)
        broken = self.broken(targets)
        source = self.placed[server.id]
        self.placed[server.id] = host
        try:
            return (len(self.violations(targets)) <= len(before)
                    and self.broken(targets) <= broken)
        finally:
            self.placed[server.id] = source


def violations(problem: Problem) -> typing.Tuple[str, ...]:
    """Every hard violation of the targets where the servers are now,
    ``<target>: <violation>`` (the policies' own audit verdicts)."""
    return tuple(_State(problem).violations(problem.targets))


def replay(problem: Problem, moves: typing.Iterable[Move]
           ) -> typing.Optional[str]:
    """Why ``moves`` cannot be taken in order on ``problem`` now (a server
    is not where the move starts, a destination has no room left, a move
    adds a violation), or None when they can.
    """
    state = _State(problem)
    targets = problem.targets
    for i, move in enumerate(moves):
        server = problem.servers.get(move.server)
        if server is None or state.placed.get(move.server) != move.source:
            return f'moves[{i}]: {move.server} is not on {move.source}'
        if not state.fits(server, move.destination):
            return (f'moves[{i}]: {move.destination} has no room for '
                    f'{move.server}')
        if not state.safe(server, move.destination, targets):
            return (f'moves[{i}]: moving {move.server} to '
                    f'{move.destination} adds a violation')
        state.move(server, move.destination)
    return None


def _components(targets: typing.Sequence[Target]
                ) -> typing.List[typing.List[Target]]:
    """Targets that share servers, together; in the targets' order."""
    found: typing.List[typing.List[Target]] = []
    for target in targets:
        joined = [c for c in found
                  if any(t.servers & target.servers for t in c)]
        merged = [target]
        for component in joined:
            merged = component + merged
            found.remove(component)
        found.append(merged)
    return found


def _world(state: _State, servers: typing.Sequence[Server]) -> World:
    """The hosts as the solver reads them: the capacity left, with what
    ``servers`` use where they run now given back (they may stay)."""
    back: typing.Dict[str, typing.Dict[str, int]] = {}
    for server in servers:
        host = back.setdefault(state.placed[server.id], {})
        for rc, n in server.resources.items():
            host[rc] = host.get(rc, 0) + n
    hosts = []
    for host in state.problem.hosts:
        free = dict(state.free[host.name])
        for rc, n in back.get(host.name, {}).items():
            free[rc] = free.get(rc, 0) + n
        hosts.append(HostState(host.name, host.provider, free,
                               host.traits))
    return World(tuple(hosts), state.problem.topology)


def _order(state: _State, servers: typing.Mapping[str, Server],
           targets: typing.Sequence[Target],
           goal: typing.Mapping[str, str]
           ) -> typing.Optional[typing.List[Move]]:
    """The moves to ``goal`` in an order that keeps capacity and adds no
    violation at every step, through free hosts where needed; None when
    there is none. Applies them to ``state``."""
    pending = {s: h for s, h in goal.items() if state.placed[s] != h}
    moves: typing.List[Move] = []
    detours = 0
    while pending:
        ready = [s for s in sorted(pending)
                 if state.fits(servers[s], pending[s])
                 and state.safe(servers[s], pending[s], targets)]
        if ready:
            name = ready[0]
            source = state.move(servers[name], pending.pop(name))
            moves.append(Move(name, source, state.placed[name]))
            continue
        if detours > 2 * len(goal):
            return None
        wanted = set(pending.values())
        for name in sorted(pending):
            server = servers[name]
            here = state.placed[name]
            free = next((h.name for h in state.problem.hosts
                         if h.name not in wanted and h.name != here
                         and state.fits(server, h.name)
                         and state.safe(server, h.name, targets)), None)
            if free is not None:
                source = state.move(server, free)
                moves.append(Move(name, source, free, temporary=True))
                detours += 1
                break
        else:
            return None
    return moves


def _flavor(server: Server) -> model.Flavor:
    return model.Flavor(dict(server.resources), server.required,
                        server.forbidden)


def plan(problem: Problem, time_limit: float = 10.0,
         workers: int = 1) -> Plan:
    """The fewest moves that end every hard violation of the targets, in
    an order that is safe to stop at any step.

    :param problem: the cloud and the targets.
    :param time_limit: seconds for the whole plan (the solver's share per
        component is what is left, split evenly).
    :param workers: CP-SAT workers (one: the same inputs, the same plan).
    :raises solver.SolverUnavailable: OR-Tools is not installed.
    """
    started = time.monotonic()
    state = _State(problem)
    before = tuple(state.violations(problem.targets))
    if not before:
        return Plan(NOTHING, seconds=time.monotonic() - started)
    broken = state.broken(problem.targets)
    components = [c for c in _components(problem.targets)
                  if any(t.id in broken for t in c)]
    moves: typing.List[Move] = []
    optimal = True

    def stopped(reason: str) -> Plan:
        return Plan(IMPOSSIBLE, reason=reason,
                    seconds=time.monotonic() - started, before=before,
                    after=before)
    for i, component in enumerate(components):
        ids = sorted({s for t in component for s in t.servers
                      if state.placed.get(s)})
        servers = [problem.servers[s] for s in ids]
        clauses = [c for t in component for c in t.clauses]
        left = time_limit - (time.monotonic() - started)
        share = max(0.5, left / (len(components) - i))
        found = solver.reassign(
            [model.Server(s.id, 'servers', _flavor(s)) for s in servers],
            _world(state, servers), clauses,
            {s.id: state.placed[s.id] for s in servers}, share, workers)
        labels = ', '.join(t.label for t in component)
        if found.feasible:
            ordered = _order(state, {s.id: s for s in servers}, component,
                             found.assignments)
            if ordered is None:
                return stopped(
                    f'{labels}: no order of the moves fits the capacity '
                    'left at every step without adding a violation')
            optimal = optimal and found.optimal
        elif found.timed_out:
            # the search ran out of time, which proves nothing: the
            # baseline's moves, when they end the component's violations
            # and each step is safe
            ordered = _fallback(state, component)
            if ordered is None:
                return stopped(f'{labels}: {found.reason}, and moving one '
                               'server at a time does not repair it')
            optimal = False
        else:
            return stopped(f'{labels}: {found.reason}')
        moves.extend(ordered)
    after = tuple(state.violations(problem.targets))
    if after:
        # nothing is proposed that does not end every violation
        return stopped('violations left: ' + after[0])
    return Plan(REPAIRED, tuple(moves), '', time.monotonic() - started,
                before, after, optimal)


def _fallback(state: _State, component: typing.Sequence[Target]
              ) -> typing.Optional[typing.List[Move]]:
    """The baseline's moves (:func:`greedy`) for one component from where
    ``state`` is, when they repair it and each fits and adds no violation
    in turn (:func:`replay`); applied to ``state``. None otherwise."""
    problem = state.problem
    here = Problem(
        tuple(dataclasses.replace(h, free=dict(state.free[h.name]))
              for h in problem.hosts),
        {sid: dataclasses.replace(s, host=state.placed[sid])
         for sid, s in problem.servers.items() if state.placed.get(sid)},
        tuple(component), problem.topology)
    found = greedy(here)
    if found.status != REPAIRED or replay(here, found.moves) is not None:
        return None
    for move in found.moves:
        state.move(problem.servers[move.server], move.destination)
    return list(found.moves)


def greedy(problem: Problem, most: typing.Optional[int] = None) -> Plan:
    """The baseline: while a target is broken, take its servers in turn and
    move the first one that has a host the filters pass (the engine's
    checks of every clause it is in, against the others where they are
    now) and that fits, to the first such host by name, if that lowers the
    violations; as a descheduler and the scheduler would, one server at a
    time.

    :param most: stop after this many moves (default: 4 per server of the
        broken targets).
    """
    started = time.monotonic()
    state = _State(problem)
    before = tuple(state.violations(problem.targets))
    engine = Engine()
    moves: typing.List[Move] = []
    names = sorted(h.name for h in problem.hosts)
    most = most if most is not None else 4 * sum(
        len(t.servers) for t in problem.targets)
    while len(moves) < most:
        broken = state.broken(problem.targets)
        if not broken:
            break
        moved = False
        for target in problem.targets:
            if target.id not in broken:
                continue
            count = len(state.violations([target]))
            for sid in sorted(target.servers):
                server = problem.servers.get(sid)
                if server is None or not state.placed.get(sid):
                    continue
                mine = [c for c in target.clauses if sid in c.servers]
                evaluation = join(engine.prepare(r) for r in
                                  clauses_mod.member_requests(
                                      mine, problem.topology, state.placed,
                                      sid))
                for host in names:
                    if host == state.placed[sid] or \
                            not state.fits(server, host) or (
                            evaluation is not None
                            and evaluation.reasons(host)):
                        continue
                    source = state.move(server, host)
                    if len(state.violations([target])) < count:
                        moves.append(Move(sid, source, host))
                        moved = True
                    else:
                        state.move(server, source)
                    break
                if moved:
                    break
            if moved:
                break
        if not moved:
            break
    after = tuple(state.violations(problem.targets))
    return Plan(REPAIRED if not after else IMPOSSIBLE, tuple(moves),
                '' if not after else 'stuck: ' + after[0],
                time.monotonic() - started, before, after)
