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
   (:func:`~nova_scoped_policies.stacks.solver.reassign`). The target's
   own servers are searched first; when the problem names other servers
   (*bystanders*, with their groups and stacks in ``kept``) and that
   finds no repair, or one of more than one move, the search may move
   bystanders too to make room: each such move keeps every hard policy
   of the bystander's own groups and stacks, their soft policies count
   in the soft cost, and it counts in the fewest moves.
2. **In which order**: each server moves once. A move is taken when its
   destination has room left by the moves before it and it adds no
   violation (no more violations than before, no group or stack broken
   that was not); when the moves that can be taken in turn dead-end,
   CP-SAT orders them all by capacity and the order is checked step by
   step. A fewest-moves answer with no such order (a swap between full
   hosts) is ruled out with every answer that fails for the same reason
   (:func:`_ruled_out`) and the solver asked again: the plan is the
   fewest moves that can be taken in order (a bystander making room
   first, say).

When no repair exists the plan is ``impossible`` and says which policy or
resource stops it; when the search ran out of time (or no answer it
found had an order) it is ``not found in time``; either proposes
nothing. :func:`greedy` is the
baseline of the benchmark: one violating server at a time, to the first
host the filters pass, as a descheduler and the scheduler would.
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
NOT_FOUND = 'not found in time'
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
    :param servers: server id -> server, at least those of the targets;
        any other is a server the plan may move to make room (a
        *bystander*).
    :param targets: the groups and stacks to repair.
    :param topology: scopes and domains (real ids).
    :param kept: the groups and stacks of bystanders: a move keeps every
        hard policy of theirs and their soft policies count in the soft
        cost; a bystander of one that is broken now stays where it is.
    """

    hosts: typing.Tuple[Host, ...]
    servers: typing.Mapping[str, Server]
    targets: typing.Tuple[Target, ...]
    topology: Topology
    kept: typing.Tuple[Target, ...] = ()


@dataclasses.dataclass(frozen=True)
class Move:
    """One live migration of a plan.

    :param server: the server's id.
    :param source: where it runs before the move.
    :param destination: where it goes.
    :param temporary: it makes room and moves on later in the plan
        (plans no longer make such moves: each server moves once).
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

    :param status: ``repaired``, ``impossible``, ``not found in time`` or
        ``nothing to do``.
    :param moves: the moves, in the order to take them, each server once
        (none unless repaired).
    :param reason: when not repaired, which policy or resource stops it,
        or what the search did not find.
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


PINNED = 'CUSTOM_NSP_REPAIR_STAYS_'
"""Prefix of the trait that keeps a server on its host in a search: the
server requires it and only its host has it (never leaves this module)."""


BARRED = 'CUSTOM_NSP_REPAIR_NOT_'
"""Prefix of the trait that keeps a bystander off a host in a search:
the server forbids it and the host has it."""


def _pin(server: str) -> str:
    return PINNED + ''.join(c for c in server.upper() if c.isalnum())


def _bar(server: str) -> str:
    return BARRED + ''.join(c for c in server.upper() if c.isalnum())


def _world(state: _State, servers: typing.Sequence[Server],
           pinned: typing.Collection[str] = (),
           barred: typing.Mapping[str, typing.Set[str]] = {}) -> World:
    """The hosts as the solver reads them: the capacity left, with what
    ``servers`` use where they run now given back (they may stay); a
    ``pinned`` server's host carries its pin trait, a host in ``barred``
    the bar traits of the servers kept off it."""
    back: typing.Dict[str, typing.Dict[str, int]] = {}
    pins: typing.Dict[str, typing.Set[str]] = {}
    for server in servers:
        host = back.setdefault(state.placed[server.id], {})
        for rc, n in server.resources.items():
            host[rc] = host.get(rc, 0) + n
        if server.id in pinned:
            pins.setdefault(state.placed[server.id], set()).add(
                _pin(server.id))
    hosts = []
    for host in state.problem.hosts:
        free = dict(state.free[host.name])
        for rc, n in back.get(host.name, {}).items():
            free[rc] = free.get(rc, 0) + n
        hosts.append(HostState(host.name, host.provider, free,
                               host.traits | pins.get(host.name, set())
                               | barred.get(host.name, set())))
    return World(tuple(hosts), state.problem.topology)


def _targets_of(problem: Problem, server: str,
                component: typing.Sequence[Target]) -> typing.List[Target]:
    """What a move of ``server`` must not break: the component's targets
    and every other group or stack the server is in."""
    return list(component) + [
        t for t in problem.targets + problem.kept
        if t not in component and server in t.servers]


def _order(state: _State, servers: typing.Mapping[str, Server],
           component: typing.Sequence[Target],
           goal: typing.Mapping[str, str], time_limit: float,
           workers: int) -> typing.Optional[typing.List[Move]]:
    """The moves to ``goal``, each server once, in an order that keeps
    capacity and adds no violation at every step; None when none is
    found. Applies them to ``state``.

    The moves that can be taken are taken in turn; when none can (a chain
    through full hosts whose greedy order dead-ends), CP-SAT orders them
    all by capacity (:func:`_sequence`) and the order is checked step by
    step."""
    problem = state.problem
    pending = {s: h for s, h in goal.items() if state.placed[s] != h}

    def safe(name: str, host: str) -> bool:
        return state.safe(servers[name], host,
                          _targets_of(problem, name, component))
    moves: typing.List[Move] = []
    while pending:
        ready = next((s for s in sorted(pending)
                      if state.fits(servers[s], pending[s])
                      and safe(s, pending[s])), None)
        if ready is None:
            break
        source = state.move(servers[ready], pending.pop(ready))
        moves.append(Move(ready, source, state.placed[ready]))
    if not pending:
        return moves
    for move in reversed(moves):
        state.move(servers[move.server], move.source)
    wanted = {s: h for s, h in goal.items() if state.placed[s] != h}
    order = _sequence(state, servers, wanted, time_limit, workers)
    if order is None:
        return None
    moves = []
    for name in order:
        if not state.fits(servers[name], wanted[name]) or \
                not safe(name, wanted[name]):
            for move in reversed(moves):
                state.move(servers[move.server], move.source)
            return None
        source = state.move(servers[name], wanted[name])
        moves.append(Move(name, source, wanted[name]))
    return moves


def _sequence(state: _State, servers: typing.Mapping[str, Server],
              wanted: typing.Mapping[str, str], time_limit: float,
              workers: int) -> typing.Optional[typing.List[str]]:
    """An order of the moves ``wanted`` (server -> destination) in which
    each destination has room when its move starts (the moves before it
    done: their sources given back, their destinations taken), found by
    CP-SAT; None when there is none or none was found in time."""
    return _capacity_order(state, servers, wanted, time_limit, workers)[1]


def _capacity_order(state: _State, servers: typing.Mapping[str, Server],
                    wanted: typing.Mapping[str, str], time_limit: float,
                    workers: int,
                    hosts: typing.Optional[typing.AbstractSet[str]] = None
                    ) -> typing.Tuple[typing.Optional[bool],
                                      typing.Optional[typing.List[str]]]:
    """(whether an order of ``wanted`` keeps capacity: True, False, or
    None when CP-SAT ran out of time; the order when True). With
    ``hosts``, only their capacity counts (a relaxation: no order here,
    none with every host counted)."""
    cp_model = solver._cp_model()
    names = sorted(wanted)
    n = len(names)
    m = cp_model.CpModel()
    position = [m.NewIntVar(0, max(0, n - 1), f'p{i}') for i in range(n)]
    m.AddAllDifferent(position)
    before = {}
    for a in range(n):
        for b in range(a + 1, n):
            var = m.NewBoolVar('')
            m.Add(position[a] < position[b]).OnlyEnforceIf(var)
            m.Add(position[a] > position[b]).OnlyEnforceIf(var.Not())
            before[a, b], before[b, a] = var, var.Not()
    for b, name in enumerate(names):
        host = wanted[name]
        if hosts is not None and host not in hosts:
            continue
        for rc, need in servers[name].resources.items():
            if not need:
                continue
            terms = []
            for a, other in enumerate(names):
                used = servers[other].resources.get(rc, 0)
                if a == b or not used:
                    continue
                if wanted[other] == host:
                    terms.append(-used * before[a, b])
                elif state.placed[other] == host:
                    terms.append(used * before[a, b])
            free = state.free.get(host, {}).get(rc, 0)
            m.Add(free - need + sum(terms) >= 0)
    engine = cp_model.CpSolver()
    engine.parameters.max_time_in_seconds = max(0.1, time_limit)
    engine.parameters.num_workers = workers
    engine.parameters.random_seed = 0
    status = engine.Solve(m)
    if status == cp_model.INFEASIBLE:
        return False, None
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, None
    return True, sorted(names, key=lambda s: engine.Value(
        position[names.index(s)]))


def _waiting(state: _State, servers: typing.Mapping[str, Server],
             wanted: typing.Mapping[str, str]) -> typing.Set[str]:
    """The destinations of the moves left waiting once every move that
    has room is taken in turn (capacity only); ``state`` is left as it
    was."""
    pending = dict(wanted)
    taken: typing.List[typing.Tuple[str, str]] = []
    while pending:
        ready = next((s for s in sorted(pending)
                      if state.fits(servers[s], pending[s])), None)
        if ready is None:
            break
        taken.append((ready, state.move(servers[ready],
                                        pending.pop(ready))))
    for name, source in reversed(taken):
        state.move(servers[name], source)
    return set(pending.values())


def _ruled_out(state: _State, servers: typing.Mapping[str, Server],
               assignments: typing.Mapping[str, str], time_limit: float,
               workers: int) -> typing.List[typing.Tuple[str, str, bool]]:
    """What rules out an answer no order of single moves can take (for
    :func:`solver.reassign`'s ``excluded``), and every answer that fails
    for the same reason.

    When the capacity of a few hosts ``H`` alone allows no order (the
    destinations of the moves left waiting, else every host a move
    touches), the answer's part that touches ``H`` is ruled out: each
    server that ends on a host of ``H`` ends there, each that leaves one
    leaves it. Any answer with that part has, on every host of ``H``,
    the same servers leaving and at least the same arriving, so no order
    either: no repair that can be taken is ruled out, and the next
    answer is the fewest moves among the others. Otherwise (the capacity
    allows an order but a step would add a violation) only this answer
    is ruled out."""
    current = {s: state.placed[s] for s in assignments}
    wanted = {s: h for s, h in assignments.items() if current[s] != h}
    touched = set(wanted.values()) | {current[s] for s in wanted}
    for hosts in (_waiting(state, servers, wanted), touched):
        if not hosts:
            continue
        near = {s: h for s, h in wanted.items()
                if h in hosts or current[s] in hosts}
        found, _ = _capacity_order(state, servers, near, time_limit,
                                   workers, hosts)
        if found is False:
            return [(s, h, True) if h in hosts else (s, current[s], False)
                    for s, h in sorted(assignments.items())
                    if h in hosts or current[s] in hosts]
    return [(s, h, True) for s, h in sorted(assignments.items())]


@dataclasses.dataclass
class _Outcome:
    """How one component's repair went."""

    status: str
    moves: typing.Sequence[Move] = ()
    reason: str = ''
    optimal: bool = False


def _placed(state: _State, clause: clauses_mod.Clause
            ) -> clauses_mod.Clause:
    """The clause over its servers that run (a member with no host has no
    part in a search)."""
    return dataclasses.replace(clause, parts=tuple(
        tuple(s for s in part if state.placed.get(s)) for part in
        clause.parts))


def _widened(state: _State, component: typing.Sequence[Target],
             moved: typing.Collection[str]):
    """The search that may move bystanders too: (servers, clauses,
    pinned) with every server that runs and may make room, the clauses
    of every group or stack it is in (and of those they share servers
    with), the servers of a broken one or moved before in the plan
    pinned."""
    problem = state.problem
    others = [t for t in problem.targets + problem.kept
              if t not in component]
    broken = state.broken(others)
    ids = {s for t in component for s in t.servers if state.placed.get(s)}
    ids |= {s for s in problem.servers if state.placed.get(s)}
    pinned = set(moved) | {s for t in others if t.id in broken
                           for s in t.servers}
    clauses = [c for t in component for c in t.clauses]
    for target in others:
        if target.id in broken:
            continue
        clauses.extend(target.clauses)
        ids |= {s for s in target.servers if state.placed.get(s)}
    # a pinned server that no clause names need not be in the search at
    # all: its capacity stays taken where it is
    named = {s for c in clauses for s in c.servers}
    ids = {s for s in ids if s not in pinned or s in named}
    return ([problem.servers[s] for s in sorted(ids)],
            [_placed(state, c) for c in clauses], pinned & ids)


def _repair(state: _State, component: typing.Sequence[Target],
            time_limit: float, workers: int,
            moved: typing.Collection[str]) -> _Outcome:
    """One component's repair from where ``state`` is (applied to it).

    First the component's own servers move (the cheapest search); when
    that finds no repair, bystanders may move too
    (:func:`_widened`)."""
    started = time.monotonic()
    problem = state.problem

    def left() -> float:
        return max(0.5, time_limit - (time.monotonic() - started))

    mine = {s for t in component for s in t.servers}

    def search(servers, clauses, pinned, limit):
        """(the solver's last answer, its moves in order or None, whether
        answers were ruled out). A bystander may go only to a host that
        has room for it now; a fewest-moves answer no order of single
        moves can take is ruled out with every answer that fails for the
        same reason (:func:`_ruled_out`) and the solver asked again,
        until an answer has an order, none is left, or the time is
        up."""
        current = {s.id: state.placed[s.id] for s in servers}
        barred: typing.Dict[str, typing.Set[str]] = {}
        bars: typing.Dict[str, str] = {}
        # a bystander goes only where it has room now: the room the
        # target needs is what bystanders leave, never the other way round
        full: typing.Dict[tuple, typing.List[str]] = {}
        for server in servers:
            if server.id in mine or server.id in pinned:
                continue
            kind = (tuple(sorted(server.resources.items())),
                    server.required, server.forbidden)
            if kind not in full:
                full[kind] = [h.name for h in problem.hosts
                              if not state.fits(server, h.name)]
            bar = _bar(server.id)
            for host in full[kind]:
                if host != current[server.id]:
                    barred.setdefault(host, set()).add(bar)
                    bars[server.id] = bar
        flavors = [model.Flavor(
            dict(s.resources),
            s.required | ({_pin(s.id)} if s.id in pinned else set()),
            s.forbidden | ({bars[s.id]} if s.id in bars else set()))
            for s in servers]
        world = _world(state, servers, pinned, barred)
        searched = [model.Server(s.id, 'servers', f)
                    for s, f in zip(servers, flavors)]
        by_id = {s.id: s for s in servers}
        deadline = time.monotonic() + limit
        excluded: typing.List[typing.List[typing.Tuple[str, str, bool]]] = []
        while True:
            found = solver.reassign(
                searched, world, clauses, current,
                max(0.5, deadline - time.monotonic()), workers,
                excluded=excluded)
            if not found.feasible:
                return found, None, bool(excluded)
            ordered = _order(state, by_id, component, found.assignments,
                             left(), workers)
            for move in reversed(ordered or ()):
                state.move(problem.servers[move.server], move.source)
            if ordered is not None or time.monotonic() >= deadline:
                return found, ordered, bool(excluded)
            excluded.append(_ruled_out(
                state, by_id, found.assignments,
                max(0.1, deadline - time.monotonic()), workers))

    ids = sorted({s for t in component for s in t.servers
                  if state.placed.get(s)})
    own = [c for t in component for c in t.clauses]
    bystanders = set(problem.servers) - set(ids) - set(moved)
    narrow, ordered, unordered = search(
        [problem.servers[s] for s in ids], [_placed(state, c) for c in own],
        set(moved) & set(ids), time_limit / (2 if bystanders else 1))
    best = None
    if ordered is not None:
        best = _Outcome(REPAIRED, ordered, optimal=narrow.optimal)
    wide = None
    if bystanders and (best is None or len(best.moves) > 1):
        # moving a bystander may take fewer moves, or be the only way
        servers, clauses, pins = _widened(state, component, moved)
        wide, ordered, more = search(servers, clauses, pins, left())
        unordered = unordered or more
        if ordered is not None and (best is None or
                                    len(ordered) < len(best.moves)):
            best = _Outcome(REPAIRED, ordered, optimal=wide.optimal)
        elif best is not None:
            best.optimal = best.optimal and wide.optimal
    if best is not None:
        for move in best.moves:
            state.move(problem.servers[move.server], move.destination)
        return best
    if narrow.timed_out or (wide is not None and wide.timed_out):
        # the search ran out of time, which proves nothing: the
        # baseline's moves, when they end the component's violations and
        # each step is safe
        fallback = _fallback(state, component, moved)
        if fallback is not None:
            return _Outcome(REPAIRED, fallback)
        return _Outcome(NOT_FOUND, reason=(
            f'{narrow.reason or wide.reason}, and moving one server at a '
            'time does not repair it'))
    if not unordered and not narrow.feasible and (
            wide is None or not wide.feasible):
        extra = (', even with other servers moved to make room'
                 if wide is not None else '')
        return _Outcome(IMPOSSIBLE, reason=narrow.reason + extra)
    return _Outcome(NOT_FOUND, reason=(
        'no order of the moves was found that fits the capacity left at '
        'every step without adding a violation or moving a server twice'))


def plan(problem: Problem, time_limit: float = 10.0,
         workers: int = 1) -> Plan:
    """The fewest moves that end every hard violation of the targets, in
    an order that is safe to stop at any step, each server moved once.

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

    def stopped(status: str, reason: str) -> Plan:
        return Plan(status, reason=reason,
                    seconds=time.monotonic() - started, before=before,
                    after=before)
    for i, component in enumerate(components):
        left = time_limit - (time.monotonic() - started)
        share = max(0.5, left / (len(components) - i))
        found = _repair(state, component, share, workers,
                        {m.server for m in moves})
        if found.status != REPAIRED:
            labels = ', '.join(t.label for t in component)
            return stopped(found.status, f'{labels}: {found.reason}')
        moves.extend(found.moves)
        optimal = optimal and found.optimal
    after = tuple(state.violations(problem.targets))
    if after:
        # nothing is proposed that does not end every violation
        return stopped(IMPOSSIBLE, 'violations left: ' + after[0])
    return Plan(REPAIRED, tuple(moves), '', time.monotonic() - started,
                before, after, optimal)


def _fallback(state: _State, component: typing.Sequence[Target],
              moved: typing.Collection[str] = ()
              ) -> typing.Optional[typing.List[Move]]:
    """The baseline's moves (:func:`greedy`) for one component from where
    ``state`` is, when they repair it, each fits and adds no violation in
    turn (:func:`replay`) and no server moves twice in the plan; applied
    to ``state``. None otherwise."""
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
    servers = [m.server for m in found.moves]
    if len(set(servers)) != len(servers) or set(servers) & set(moved):
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
