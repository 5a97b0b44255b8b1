"""The joint decision for a whole stack (pure; OR-Tools CP-SAT inside)."""

import bisect
import collections
import dataclasses
import time
import typing

from nova_scoped_policies.engine import Engine
from nova_scoped_policies.engine import join
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.stacks.clauses import Clause
from nova_scoped_policies.stacks.clauses import check_server
from nova_scoped_policies.stacks.clauses import compile_stack
from nova_scoped_policies.stacks.clauses import read_candidates
from nova_scoped_policies.stacks.clauses import items as clause_items
from nova_scoped_policies.stacks.clauses import member_requests
from nova_scoped_policies.stacks.deadline import Deadline
from nova_scoped_policies.stacks.deadline import not_found
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks.world import HostState
from nova_scoped_policies.stacks.world import World
from nova_scoped_policies.topology import Topology


@dataclasses.dataclass(frozen=True)
class Decision:
    """The answer for a stack.

    :param feasible: every server has a host.
    :param assignments: server name -> host name (all servers, or none).
    :param reason: when infeasible, which policy or resource cannot be met
        (never naming hosts of other tenants); else ''.
    :param seconds: time spent deciding.
    :param optimal: the decision is proven optimal for the soft
        policies, or there is nothing to improve (no soft policy); False
        when the limit or the gap stopped the search first.
    :param cost: the soft policies' objective (lower is better).
    :param stop: why the search stopped, for a decision found
        (:data:`FIRST`, :data:`OPTIMAL`, :data:`GAP`, :data:`LIMIT`) or a
        search cut short with none (:data:`LIMIT`); '' for a refusal.
    :param timed_out: no decision, only because the limit cut the search
        short: the stack may still fit (the reason says so); never
        called infeasible.
    """

    feasible: bool
    assignments: typing.Mapping[str, str]
    reason: str = ''
    seconds: float = 0.0
    optimal: bool = False
    cost: int = 0
    stop: str = ''
    timed_out: bool = False


FIRST = 'nothing to improve'
"""The search stopped at its first decision: the stack has no soft
policy (no objective), and every decision that meets the hard ones is as
good."""
OPTIMAL = 'optimal'
"""The search proved its decision optimal for the soft policies."""
GAP = 'gap'
"""The search stopped within the relative gap of the best bound
(``[scoped_policies_api] stack_relative_gap``)."""
LIMIT = 'limit'
"""The time limit cut the search short."""


class SolverUnavailable(RuntimeError):
    """OR-Tools is not installed: ``pip install
    nova-scoped-policies[joint]``."""


class DecisionError(RuntimeError):
    """A decision failed its replay through the engine's host checks: a
    solver bug, never returned to a caller as a decision."""


_OUTSIDE = object()
"""The first half of the domain key of a slot whose host is in no domain
of a scope (``(_OUTSIDE, slot)``: each such host apart)."""


class _OutOfTime(Exception):
    """Building the slots or the model would take past its deadline."""


def _past(deadline: typing.Optional[float]) -> bool:
    return deadline is not None and time.monotonic() > deadline


# -- hosts into classes -------------------------------------------------------

@dataclasses.dataclass
class _Slot:
    """A host the model may use; slots of one class are interchangeable."""

    host: str
    free: typing.Tuple[int, ...]
    domains: typing.Dict[str, typing.Optional[str]]
    klass: int
    accepts: typing.FrozenSet[model.Flavor]


def _domain_of(topology: Topology, scope: str,
               host: str) -> typing.Optional[str]:
    if scope == HOST_SCOPE:
        return host
    found = topology.domains_of(scope, host)
    return found[0] if len(found) == 1 else None


def _accepts_traits(flavor: model.Flavor, host: HostState) -> bool:
    return flavor.required <= host.traits and \
        not flavor.forbidden & host.traits


def _accepts(flavor: model.Flavor, host: HostState) -> bool:
    if not _accepts_traits(flavor, host):
        return False
    return all(host.free.get(rc, 0) >= n
               for rc, n in flavor.resources.items() if n)


def _bound(group: model.Group, clauses_by_field, eligible: typing.Set[str],
           key: typing.Mapping[str, typing.Optional[str]]) -> int:
    """Most servers of ``group`` one class of hosts (all in the same
    domains of every scope) can hold in any decision."""
    if group.leaf:
        n = sum(1 for s in group.servers if s.name in eligible)
    else:
        values = [_bound(m, clauses_by_field, eligible, key)
                  for m in group.members]
        n = sum(values)
    clause = clauses_by_field.get(group.field)
    if clause is None:
        return n
    rules = clause.document.rules
    for plugin, item in clause_items(clause):
        cap = plugin.cap(item, rules) if plugin.hard else None
        if cap is None or item.scope == HOST_SCOPE \
                or key.get(item.scope) is None:
            continue
        if clause.counts_union(item.scope):
            n = min(n, cap)
        else:
            n = min(n, max(values, default=0))
    return n


def _classes(stack: model.Stack, world: World, clauses: typing.List[Clause],
             rcs: typing.Sequence[str], merge: bool,
             special: typing.AbstractSet[str] = frozenset(),
             scopes: typing.Optional[typing.AbstractSet[str]] = None,
             deadline: typing.Optional[float] = None,
             stand_in: typing.Optional[typing.Dict[
                 str, typing.List[int]]] = None
             ) -> typing.List[_Slot]:
    """The hosts as slots: with ``merge``, hosts alike for this stack are
    one class, and a host that ``n`` kept hosts of its class dominate in
    every resource is dropped when ``n`` reaches the most servers the
    class can take (any decision using it can move to a free one). Hosts
    of ``special`` (and of existing servers) are each a class of their
    own. ``scopes``: those the clauses name (default: the stack's).
    ``stand_in``, when given, is filled with each dropped host's classes
    that may stand in for it (in the same domains, at least its free
    capacity in every resource; see :func:`_canonical`).

    :raises _OutOfTime: past ``deadline`` (a ``time.monotonic()``).
    """
    topology = world.topology
    scopes = sorted(s for s in (stack.scopes if scopes is None else scopes)
                    if s != HOST_SCOPE)
    flavors = sorted({s.flavor for s in stack.servers}, key=repr)
    fixed_hosts = {h for c in clauses for h in c.fixed}
    read = [key for c in clauses for plugin, item in clause_items(c)
            for key in (plugin.host_key(item, topology),) if key is not None]
    by_key: typing.Dict[tuple, typing.List[HostState]] = {}
    for n, host in enumerate(world.hosts):
        if not n % 512 and _past(deadline):
            raise _OutOfTime()
        accepts = tuple(_accepts(f, host) for f in flavors)
        if not any(accepts):
            continue
        domains = tuple(_domain_of(topology, s, host.name) for s in scopes)
        if read:
            domains += tuple(key(host.name) for key in read)
        alone = host.name if (host.name in fixed_hosts or not merge
                              or host.name in special) else None
        by_key.setdefault((domains, accepts, alone), []).append(host)
    slots: typing.List[_Slot] = []
    by_field = {c.field: c for c in clauses}
    # each server's flavor by its index in ``flavors``, found once
    index = {f: i for i, f in enumerate(flavors)}
    flavor_of = [(s.name, index[s.flavor]) for s in stack.servers]
    caps: typing.Dict[tuple, int] = {}
    klass = 0
    for (domains, accepts, _), hosts in by_key.items():
        if _past(deadline):
            raise _OutOfTime()
        key = dict(zip(scopes, domains[:len(scopes)]))
        accepted = frozenset(f for f, ok in zip(flavors, accepts) if ok)
        eligible = {name for name, fi in flavor_of if accepts[fi]}
        # _bound reads of the key only which scopes it has a domain in
        shape = (accepts, tuple(k for k, v in key.items() if v is None))
        cap = caps.get(shape)
        if cap is None:
            cap = caps[shape] = _bound(stack.root, by_field, eligible, key)
        vectors: typing.Dict[tuple, typing.List[str]] = {}
        for host in hosts:
            vector = tuple(host.free.get(rc, 0) for rc in rcs)
            vectors.setdefault(vector, []).append(host.name)
        kept: typing.List[typing.Tuple[tuple, int, int]] = []
        for vector in sorted(vectors, key=lambda v: (-sum(v), v)):
            names = sorted(vectors[vector])
            if merge:
                above = [(k, n) for w, n, k in kept if all(
                    a >= b for a, b in zip(w, vector))]
                keep = max(0, cap - sum(n for _, n in above))
                if stand_in is not None:
                    for name in names[keep:]:
                        stand_in[name] = [klass] * bool(keep) + [
                            k for k, _ in above]
                names = names[:keep]
            if not names:
                continue
            kept.append((vector, len(names), klass))
            for name in names:
                slots.append(_Slot(name, vector, dict(key), klass,
                                   accepted))
            klass += 1
    return slots


# -- the CP-SAT model ---------------------------------------------------------


class _Model:
    """One CP-SAT model of a stack over slots; ``enabled`` picks the hard
    items it enforces (all of them, or a prefix when explaining);
    building it past ``deadline`` (a ``time.monotonic()``) raises
    :class:`_OutOfTime`, and so does a build whose first servers'
    variables say it would end past it (:data:`BUILD_FACTOR`): the
    time is not spent on a model there is no time to build."""

    def __init__(self, cp_model, stack: model.Stack, world: World,
                 clauses: typing.List[Clause], slots: typing.List[_Slot],
                 rcs: typing.Sequence[str],
                 enabled: typing.Optional[int] = None,
                 deadline: typing.Optional[float] = None) -> None:
        self.deadline = deadline
        self.cp = cp_model
        self.m = cp_model.CpModel()
        self.topology = world.topology
        self.slots = slots
        self.servers = stack.servers
        self.index = {s.name: i for i, s in enumerate(self.servers)}
        self.x: typing.Dict[typing.Tuple[int, int], typing.Any] = {}
        self.cost: typing.List[typing.Any] = []
        self._present: typing.Dict[tuple, typing.Any] = {}
        self._domains: typing.Dict[str, typing.List[typing.Any]] = {}
        self.hard_items: typing.List[typing.Tuple[Clause, base.Item]] = []
        hard_scopes = self._hard_scopes(clauses)
        # slots of one class and servers of one flavor and scopes are
        # alike: which slots a server may use is computed once per kind
        by_kind: typing.Dict[tuple, typing.List[int]] = {}
        begun = time.monotonic()
        for si, server in enumerate(self.servers):
            kind = (server.flavor, frozenset(hard_scopes[si]))
            found = by_kind.get(kind)
            if found is None:
                verdict: typing.Dict[int, bool] = {}
                found = by_kind[kind] = []
                for ti, slot in enumerate(slots):
                    ok = verdict.get(slot.klass)
                    if ok is None:
                        ok = verdict[slot.klass] = self._eligible(
                            server, slot, rcs, hard_scopes[si])
                    if ok:
                        found.append(ti)
            for ti in found:
                self.x[si, ti] = self.m.NewBoolVar('')
            self.tick()
            if deadline is not None and si >= 7:
                spent = time.monotonic() - begun
                if begun + spent * BUILD_FACTOR * len(self.servers) / (
                        si + 1) > deadline:
                    raise _OutOfTime()
        self.by_server: typing.Dict[int, typing.List[int]] = {}
        self.by_slot: typing.Dict[int, typing.List[int]] = {}
        for si, ti in self.x:
            self.by_server.setdefault(si, []).append(ti)
            self.by_slot.setdefault(ti, []).append(si)
        for si in range(len(self.servers)):
            self.m.AddExactlyOne(self.x[si, ti]
                                 for ti in self.by_server.get(si, ()))
        self.tick()
        self._capacity(rcs)
        self.tick()
        self._symmetry()
        count = 0
        for clause in clauses:
            self.tick()
            rules = clause.document.rules
            for plugin, item in clause_items(clause):
                if not plugin.hard:
                    plugin.encode(item, clause, rules, self)
                    continue
                self.hard_items.append((clause, item))
                if enabled is None or count < enabled:
                    try:
                        plugin.encode(item, clause, rules, self)
                    except base.Infeasible:
                        self.m.AddBoolOr([])
                count += 1
        if self.cost:
            self.m.Minimize(sum(self.cost))

    def tick(self) -> None:
        """Raise :class:`_OutOfTime` past the deadline."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _OutOfTime()

    def _hard_scopes(self, clauses):
        scopes: typing.Dict[int, typing.Set[str]] = {
            i: set() for i in range(len(self.servers))}
        for clause in clauses:
            hard = {item.scope for plugin, item in clause_items(clause)
                    if plugin.hard}
            for name in clause.servers:
                scopes[self.index[name]] |= hard
        return scopes

    @staticmethod
    def _eligible(server, slot, rcs, hard_scopes) -> bool:
        flavor = server.flavor
        if flavor not in slot.accepts:
            return False
        for rc, free in zip(rcs, slot.free):
            if flavor.resources.get(rc, 0) > free:
                return False
        return all(slot.domains.get(s, slot.host) is not None
                   for s in hard_scopes)

    def _capacity(self, rcs) -> None:
        weighted = self.cp.LinearExpr.WeightedSum
        demand = [[s.flavor.resources.get(rc, 0) for rc in rcs]
                  for s in self.servers]
        for ti, sis in self.by_slot.items():
            slot = self.slots[ti]
            for ri in range(len(rcs)):
                needs = [demand[si][ri] for si in sis]
                if sum(needs) > slot.free[ri]:
                    self.m.Add(weighted([self.x[si, ti] for si in sis],
                                        needs) <= slot.free[ri])

    def _symmetry(self) -> None:
        """Slots of one class are interchangeable: use them in order."""
        previous: typing.Dict[int, typing.Any] = {}
        for ti, slot in enumerate(self.slots):
            sis = self.by_slot.get(ti)
            if not sis:
                continue
            used = self.m.NewBoolVar('')
            self.m.AddMaxEquality(used, [self.x[si, ti] for si in sis])
            before = previous.get(slot.klass)
            if before is not None:
                self.m.AddImplication(used, before)
            previous[slot.klass] = used

    def domain(self, ti: int, scope: str):
        slot = self.slots[ti]
        if scope == HOST_SCOPE:
            return slot.host
        found = slot.domains.get(scope)
        return found if found is not None else (_OUTSIDE, ti)

    @staticmethod
    def outside_domain(key) -> bool:
        return isinstance(key, tuple) and key[0] is _OUTSIDE

    def outside(self, names: typing.Iterable[str], scope: str
                ) -> typing.List[typing.Any]:
        return [x for key, xs in self.by_domain(names, scope).items()
                if self.outside_domain(key) for x in xs]

    def fixed_domains(self, clause: Clause, scope: str) -> typing.Counter:
        found: typing.Counter = collections.Counter()
        for host in clause.fixed:
            for domain in ((host,) if scope == HOST_SCOPE else
                           self.topology.domains_of(scope, host)):
                found[domain] += 1
        return found

    def by_domain(self, names: typing.Iterable[str], scope: str
                  ) -> typing.Dict[typing.Any, typing.List[typing.Any]]:
        found: typing.Dict[typing.Any, typing.List[typing.Any]] = {}
        domains = self._domains.get(scope)
        if domains is None:
            domains = self._domains[scope] = [
                self.domain(ti, scope) for ti in range(len(self.slots))]
        x = self.x
        for name in names:
            si = self.index[name]
            for ti in self.by_server.get(si, ()):
                found.setdefault(domains[ti], []).append(x[si, ti])
        return found

    def present(self, names: typing.Tuple[str, ...], scope: str
                ) -> typing.Dict[typing.Any, typing.Any]:
        """domain -> a boolean: some server of ``names`` is in it."""
        key = (names, scope)
        found = self._present.get(key)
        if found is None:
            found = {}
            for domain, xs in self.by_domain(names, scope).items():
                var = self.m.NewBoolVar('')
                self.m.AddMaxEquality(var, xs)
                found[domain] = var
            self._present[key] = found
        return found

    def forbid(self, names, keep) -> None:
        for name in names:
            si = self.index[name]
            for ti in self.by_server.get(si, ()):
                if not keep(ti):
                    self.m.Add(self.x[si, ti] == 0)

    def host_of(self, slot: int) -> str:
        return self.slots[slot].host

    def add_cost(self, terms, weight: int = 1) -> None:
        self.cost.extend(weight * t if weight != 1 else t for t in terms)

    def assignments(self, solver) -> typing.Dict[str, str]:
        return {self.servers[si].name: self.slots[ti].host
                for (si, ti), var in self.x.items()
                if solver.BooleanValue(var)}


# -- deciding -----------------------------------------------------------------

MISSING = ('joint decisions need OR-Tools: pip install '
           '"nova-scoped-policies[joint]"')
"""What :class:`SolverUnavailable` says (the policy service answers 501
with it, the simulator exits 2 with it)."""


def _cp_model():
    try:
        from ortools.sat.python import cp_model
    except ImportError:  # pragma: no cover - depends on the install
        raise SolverUnavailable(MISSING) from None
    return cp_model


def with_traits(world: World) -> World:
    """``world`` whose topology knows its hosts' traits (the licences
    they carry: ``Topology.with_traits``)."""
    topology = world.topology.with_traits(
        {h.name: h.traits for h in world.hosts})
    if topology is world.topology:
        return world
    return dataclasses.replace(world, topology=topology)


def _resource_classes(stack: model.Stack) -> typing.List[str]:
    return sorted({rc for s in stack.servers
                   for rc, n in s.flavor.resources.items() if n})


def _solve(cp_model, built: _Model, time_limit: float, workers: int,
           seed: int, deterministic: bool = False, gap: float = 0.0,
           first: typing.Optional[bool] = None):
    """Search ``built`` for ``time_limit`` seconds: of wall time, or with
    ``deterministic`` of CP-SAT's deterministic time with one worker
    (the same model gives the same answer on any machine). A model with
    no objective stops at its first decision (every decision is as
    good), and so does any with ``first`` (whether it fits is all that
    is asked); one with an objective within ``gap`` of its best
    bound."""
    solver = cp_model.CpSolver()
    parameters = solver.parameters
    if deterministic:
        parameters.max_deterministic_time = max(0.01, time_limit)
        parameters.num_workers = 1
    else:
        parameters.max_time_in_seconds = max(0.01, time_limit)
        parameters.num_workers = workers
    parameters.random_seed = seed
    # the model breaks the symmetry of interchangeable hosts itself
    # (_Model._symmetry): CP-SAT's own search for symmetries cost 60% of
    # a 3 x 4 decision at 10,000 hosts
    parameters.symmetry_level = 0
    if first or (first is None and not built.m.HasObjective()):
        parameters.stop_after_first_solution = True
    elif gap:
        parameters.relative_gap_limit = gap
    status = solver.Solve(built.m)
    return solver, status


BUILD_FACTOR = 4.0
"""A model's whole build over the time its servers' variables take (about
a quarter of it: capacity, symmetry and the policies take the rest,
measured on 1,000 servers with soft policies over 2,000 hosts)."""
FIRST_SHARE = 0.4
"""The most of a decision's time limit the one-at-a-time decision
(:func:`one_at_a_time`) may take when the stack has soft policies; the
solver starts from it and has the rest. Without soft policies it is the
answer, and may take all but :data:`FINISH_SHARE`."""
FINISH_SHARE = 0.15
"""The share of a decision's time limit kept after CP-SAT's search, to
replay its answer through the engine's checks (or, when it found none,
the one-at-a-time decision and its cost)."""
WEIGH_SHARE = 0.25
"""The most of a decision's time limit the one-at-a-time decision weighs
hosts by the stack's soft policies; past it, the servers left go on the
roomiest passing host (it must finish within :data:`FIRST_SHARE`)."""
SEARCH_SHARE = 0.5
"""The least of a decision's time limit left for CP-SAT's search once
its model is built: a model that takes longer to build is not built,
and the one-at-a-time decision is the answer."""


WEIGHERS = tuple(sorted({p.weigher for p in registry.PLUGINS
                         if p.weigher is not None}))
"""The kinds of nova weigher the soft policies' weights belong to."""


def one_at_a_time(stack: model.Stack, world: World,
                  clauses: typing.Sequence[Clause],
                  deadline: typing.Optional[float] = None,
                  weigh_until: typing.Optional[float] = None,
                  packed: typing.Optional[str] = None,
                  weigh: bool = True
                  ) -> typing.Optional[typing.Dict[str, str]]:
    """nova's way: each server, in document order, on the passing host
    with the best weight by its soft policies (scaled and summed as
    nova's weighers do), then the most memory free (then the most VCPU,
    then by name), never revisited; the engine's checks against the
    servers placed before it. All or nothing: None when a server finds no
    host (or ``deadline``, a ``time.monotonic()``, passes).

    A host's soft weight depends on its domains, and at the host scope
    on the host itself: the hosts weighed for a server are the roomiest
    passing host of each domain of every scope its soft policies read,
    the roomiest passing host, and the hosts of the members its host
    scope soft policies count. Past ``weigh_until`` (a
    ``time.monotonic()``), the servers left go on the roomiest passing
    host, unweighed; with ``weigh`` False, every server does.

    The hosts a hard check rejects by their domain alone (anti-affinity
    across groups by rack...) are never read one by one: each domain's
    verdict is asked once per server, and only the hosts of the domains
    it passes are read (nova's order is kept: the roomiest of them).

    :param packed: a scope: each server first on the roomiest passing
        host of a domain of that scope holding servers of its own group
        (unweighed): a group fills its domains before it opens others,
        leaving whole domains to the groups after it (the second try
        when the first finds no host for a server).
    """
    engine = Engine()
    free = {h.name: collections.Counter(h.free) for h in world.hosts}
    accepts = {h.name: h for h in world.hosts}
    weighs = weigh and _soft(clauses)

    def room(host: str) -> tuple:
        return (free[host]['MEMORY_MB'], free[host]['VCPU'], host)

    # hosts in order of room, sorted once; the few a server lands on
    # are taken out of it and weighed afresh each time
    order = sorted(free, key=room, reverse=True)
    mates = {s.name: group.servers for group in stack.root.walk()
             if group.leaf for s in group.servers}
    in_domains: typing.Dict[str, typing.Dict[str, typing.List[str]]] = {}
    soft_host: typing.Dict[int, bool] = {}

    def soft_hosts(document) -> bool:
        """Whether ``document`` has a soft item at the host scope."""
        found = soft_host.get(id(document))
        if found is None:
            found = soft_host[id(document)] = any(
                not plugin.hard and item.scope == HOST_SCOPE
                for plugin, item in registry.items(document))
        return found

    def domain_orders(scope: str) -> typing.Dict[str, typing.List[str]]:
        """domain of ``scope`` -> its hosts, in ``order``."""
        found = in_domains.get(scope)
        if found is None:
            found = in_domains[scope] = {}
            for host in order:
                for domain in world.topology.domains_of(scope, host):
                    found.setdefault(domain, []).append(host)
        return found
    used: typing.Set[str] = set()
    # the hosts used, by room (ascending): the roomiest that passes is
    # the first found from the end
    rooms: typing.List[tuple] = []
    placed: typing.Dict[str, str] = {}
    for server in stack.servers:
        now = time.monotonic()
        if deadline is not None and now > deadline:
            return None
        weighing = weighs and (weigh_until is None or now < weigh_until)
        need = server.flavor.resources
        requests = member_requests(clauses, world.topology, placed,
                                   server.name, hard_only=not weighing)
        evaluation = join(engine.prepare(r) for r in requests)

        def takes(name: str) -> bool:
            left = free[name]
            return not (any(left[rc] < n for rc, n in need.items() if n)
                        or not _accepts_traits(server.flavor, accepts[name]))
        checks = () if evaluation is None else evaluation.checks_for(
            (), read_candidates(evaluation,
                                lambda: [h for h in order if takes(h)]))

        def fits(name: str) -> bool:
            return takes(name) and not any(check(name) is not None
                                           for check in checks)
        best = None
        if packed is not None:
            held = sorted({d for s in mates[server.name] if s.name in placed
                           for d in world.topology.domains_of(
                               packed, placed[s.name])})
            best = next((h for d in held for h in domain_orders(packed)[d]
                         if fits(h)), None)
        beside = best is not None
        if best is None:
            best = _roomiest_unused(checks, order, used, fits, room,
                                    domain_orders)
            top = next((r[-1] for r in reversed(rooms) if fits(r[-1])),
                       None)
            if top is not None and (best is None or
                                    room(top) > room(best)):
                best = top
        if best is None:
            return None
        if not beside and weighing and evaluation is not None and any(
                evaluation.has_weights(k) for k in WEIGHERS):
            best = _weighed(evaluation, requests, best, domain_orders,
                            fits, room, soft_hosts)
        if best in used:
            rooms.remove(room(best))
        free[best].subtract(need)
        used.add(best)
        bisect.insort(rooms, room(best))
        placed[server.name] = best
    return placed


def _roomiest_unused(checks, order: typing.Sequence[str],
                     used: typing.AbstractSet[str],
                     fits: typing.Callable[[str], bool],
                     room: typing.Callable[[str], tuple],
                     domain_orders: typing.Callable[[str], typing.Mapping[
                         str, typing.Sequence[str]]]
                     ) -> typing.Optional[str]:
    """The roomiest host of ``order`` not ``used`` that ``fits``.

    The checks that reject by domain alone (``Check.domains``) say which
    domains of their scope may take the server, one verdict per domain;
    the hosts of the scope whose passing domains hold the fewest are the
    only ones read, each domain's in ``order``: the first that fits in
    each, and the roomiest of those (every host that fits is in one of
    them, and a host's room is unique: the same host as reading
    ``order`` from its start)."""
    by_scope: typing.Dict[str, typing.List[typing.Callable[[str], bool]]]
    by_scope = {}
    for check in checks:
        domains = getattr(check, 'domains', None)
        if domains is not None and domains[0] != HOST_SCOPE:
            by_scope.setdefault(domains[0], []).append(domains[1])
    pools = None
    for scope, rejects in sorted(by_scope.items()):
        passing = [hosts for domain, hosts in sorted(
            domain_orders(scope).items())
            if not any(reject(domain) for reject in rejects)]
        if pools is None or sum(map(len, passing)) < sum(map(len, pools)):
            pools = passing
    if pools is None:
        return next((h for h in order if h not in used and fits(h)), None)
    firsts = (next((h for h in hosts if h not in used and fits(h)), None)
              for hosts in pools)
    return max((h for h in firsts if h is not None), key=room, default=None)


def _weighed(evaluation, requests, best: str,
             domain_orders: typing.Callable[[str], typing.Mapping[
                 str, typing.Sequence[str]]],
             fits: typing.Callable[[str], bool],
             room: typing.Callable[[str], tuple],
             soft_hosts: typing.Callable[[typing.Any], bool]) -> str:
    """The host of best soft weight (then room) among those that stand
    for every host (see :func:`one_at_a_time`); ``best``: the roomiest
    passing host."""
    pool = {best}
    soft = [(plugin, item) for plugin, item in evaluation.items
            if not plugin.hard]
    for scope in {item.scope for _, item in soft}:
        if scope == HOST_SCOPE:
            continue
        for hosts in domain_orders(scope).values():
            found = next((h for h in hosts if fits(h)), None)
            if found is not None:
                pool.add(found)
    for request in requests:
        if soft_hosts(request.document):
            pool.update(h for h in request.placements.values()
                        if h and fits(h))
    hosts = sorted(pool)
    total = [0.0] * len(hosts)
    for kind in WEIGHERS:
        if evaluation.has_weights(kind):
            total = [a + b for a, b in zip(
                total, evaluation.weights(kind, hosts))]
    return max(zip(total, hosts), key=lambda tw: (tw[0], room(tw[1])))[1]


def _unfit_server(stack: model.Stack, world: World,
                  rcs: typing.Sequence[str]) -> typing.Optional[str]:
    for group in stack.root.walk():
        if not group.leaf:
            continue
        flavor = group.servers[0].flavor
        if not any(_accepts(flavor, host) for host in world.hosts):
            asked = ', '.join(f'{rc} {n}' for rc, n in
                              sorted(flavor.resources.items()) if n)
            traits = sorted(flavor.required)
            if traits:
                asked += ' and traits ' + ', '.join(traits)
            return (f'{group.field}.servers.flavor: no host has {asked} '
                    'free')
    for ri, rc in enumerate(rcs):
        need = sum(s.flavor.resources.get(rc, 0) for s in stack.servers)
        have = sum(h.free.get(rc, 0) for h in world.hosts)
        if need > have:
            return f'the stack needs {need} {rc}; not that much is free'
    return None


def _explain(cp_model, stack, world, clauses, slots, rcs, time_limit,
             workers, seed, deadline: typing.Optional[float] = None,
             deterministic: bool = False) -> str:
    """Which hard item (in document order) first makes the stack unfit;
    each model built and searched before ``deadline`` (a
    ``time.monotonic()``; past it, the stack is said not to fit without
    naming the item), or with ``deterministic`` each searched for its
    share of ``time_limit`` in deterministic time."""
    reason = _unfit_server(stack, world, rcs)
    if reason:
        return reason
    unnamed = ('the servers do not fit in the capacity left with their '
               'hard policies (no time left to say which policy)')

    def left() -> float:
        return per_try if deadline is None else min(
            per_try, deadline - time.monotonic())
    try:
        built = _Model(cp_model, stack, world, clauses, slots, rcs,
                       enabled=0, deadline=deadline)
        per_try = max(0.5, time_limit / (len(built.hard_items) + 1))
        if left() <= 0:
            return unnamed
        _, status = _solve(cp_model, built, left(), workers, seed,
                           deterministic, first=True)
        if status == cp_model.INFEASIBLE:
            return ('the servers do not fit in the capacity left (' +
                    ', '.join(rcs) + ') whatever the policies')
        for n, (clause, st) in enumerate(built.hard_items, 1):
            trial = _Model(cp_model, stack, world, clauses, slots, rcs,
                           enabled=n, deadline=deadline)
            if left() <= 0:
                return unnamed
            _, status = _solve(cp_model, trial, left(), workers, seed,
                               deterministic, first=True)
            if status == cp_model.INFEASIBLE:
                before = ('' if n == 1 else
                          ' together with the policies before it')
                return (f'{clause.field}: {st.label} cannot be met with '
                        f'the capacity left{before}')
    except _OutOfTime:
        return unnamed
    # the last model has every hard item, as the one proven infeasible:
    # a try ran out of its time
    return unnamed


def _failed(cp_model, status, explained: tuple,
            timed_out: str) -> typing.Optional[str]:
    """None when the solver found an answer; else why not: the hard item
    that makes the model infeasible (:func:`_explain` of ``explained``),
    or ``timed_out``."""
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    if status == cp_model.INFEASIBLE:
        return _explain(cp_model, *explained)
    return timed_out


def _finest_hard_scope(clauses: typing.Sequence[Clause],
                       topology: Topology) -> typing.Optional[str]:
    """The scope of a hard item, not the host, with the most domains."""
    scopes = {item.scope for c in clauses for plugin, item in c.items
              if plugin.hard and item.scope != HOST_SCOPE
              and topology.scope(item.scope) is not None}
    return max(sorted(scopes), key=lambda s: len(topology.domains(s)),
               default=None)


def _soft(clauses: typing.Sequence[Clause]) -> bool:
    """Whether any clause has a soft item: an objective to optimise."""
    return any(not plugin.hard for c in clauses
               for plugin, _ in clause_items(c))


def decide(stack: model.Stack, world: World, time_limit: float = 10.0,
           merge: bool = True, workers: int = 1, seed: int = 0,
           search: bool = False,
           deadline: typing.Optional[Deadline] = None,
           gap: float = 0.0) -> Decision:
    """One joint decision for the whole stack, all or nothing, by its
    deadline (what is left of it when called).

    Hard policies and the capacity of every host are constraints, soft
    policies the objective (lower cost is better). A decision one server
    at a time (:func:`one_at_a_time`) comes first. When it meets every
    hard policy and the stack has no soft policy, it is the answer:
    there is nothing to improve. Otherwise CP-SAT starts from it, and
    it is the answer when CP-SAT finds no decision in time (or its model
    could not be built in time), so a stack that fits that way is never
    refused for lack of time. The search stops as soon as it has nothing
    to improve: at its first decision when the model has no objective,
    within ``gap`` of the best bound, at a proven optimum, or at the
    limit (:attr:`Decision.stop` says which). The best decision found is
    returned; it is replayed through the engine's host checks first.
    Every phase (the first decision, the classes of hosts, the model,
    the search, the replay and the explanation of a refusal) ends by the
    deadline.

    :param stack: the validated stack.
    :param world: hosts, topology and existing servers, real ids.
    :param time_limit: seconds from the call to the answer, when no
        ``deadline`` is given.
    :param merge: merge interchangeable hosts into classes (False: one
        variable per host, for tests).
    :param workers: CP-SAT search workers; with one, the same inputs give
        the same decision (given the same work, see ``deadline``).
    :param seed: CP-SAT random seed.
    :param search: search with CP-SAT even when the first decision has
        nothing to improve (tests of the model).
    :param deadline: the limit, passed down from the request: wall time
        (the solver has what is left of it) or deterministic work
        (:meth:`Deadline.work`: CP-SAT's deterministic time with one
        worker, no clock read: the same inputs give the same decision on
        any machine).
    :param gap: the relative gap at which the search of a stack with soft
        policies stops (0: only at a proven optimum or the limit).
    :raises model.StackError: the stack names a scope the cloud does not
        define, scopes that do not nest, or unknown existing resources.
    :raises SolverUnavailable: OR-Tools is not installed.
    """
    if deadline is None:
        deadline = Deadline.wall(time_limit)
    wall = not deadline.deterministic
    if not wall:
        workers = 1
    started = time.monotonic()
    # the solver's own limit: what the caller left of the deadline
    time_limit = deadline.left()

    def by(share: float) -> typing.Optional[float]:
        """``share`` of the limit from now, as a ``time.monotonic()``;
        None (no clock) for deterministic work."""
        return started + time_limit * share if wall else None

    def out_of_time(detail: str = '') -> Decision:
        return Decision(False, {}, not_found(deadline, detail),
                        time.monotonic() - started, stop=LIMIT,
                        timed_out=True)
    if wall and time_limit <= 0:
        return out_of_time(f'{deadline.spent():.1f} s spent before the '
                           'decision')
    model.check_topology(stack, world.topology)
    world = with_traits(world)
    clauses = compile_stack(stack, world)
    rcs = _resource_classes(stack)
    soft = _soft(clauses)
    # a decision that meets every hard policy first, nova's way: the
    # solver's starting point, and the answer when it finds none in time;
    # with nothing to improve it is the answer, and may take all but the
    # time to replay it (the model would take longer)
    first_by = by(FIRST_SHARE if soft or search else 1 - FINISH_SHARE)
    first = one_at_a_time(stack, world, clauses, first_by, by(WEIGH_SHARE))
    if first is None and soft:
        # the soft policies' weights may have led it astray: unweighed
        first = one_at_a_time(stack, world, clauses, first_by, weigh=False)
    finest = _finest_hard_scope(clauses, world.topology)
    if first is None and finest is not None:
        # groups kept apart by a scope fit more often when each fills
        # its domains before opening others
        first = one_at_a_time(stack, world, clauses, first_by,
                              by(WEIGH_SHARE), packed=finest)
    if first is not None and not soft and not search:
        replay(stack, world, clauses, first)
        return Decision(True, first, '', time.monotonic() - started, True,
                        stop=FIRST)
    # imported after the first decision: the first import of OR-Tools
    # takes seconds, which the first decision needs not wait for
    cp_model = _cp_model()
    # without a first decision, the model may take all but the time to
    # replay; with one, it must leave half the limit to the search
    build_by = by(1 - SEARCH_SHARE if first is not None
                  else 1 - FINISH_SHARE)

    def fallback() -> Decision:
        """The first decision (checked), or no decision in time."""
        if first is None:
            return out_of_time()
        replay(stack, world, clauses, first)
        return Decision(True, first, '', time.monotonic() - started,
                        stop=LIMIT)
    stand_in: typing.Dict[str, typing.List[int]] = {}
    try:
        slots = _classes(stack, world, clauses, rcs, merge,
                         deadline=build_by, stand_in=stand_in)
        # a model too big to build and search in time: the first decision
        built = _Model(cp_model, stack, world, clauses, slots, rcs,
                       deadline=build_by)
    except _OutOfTime:
        return fallback()
    if first is not None:
        # CP-SAT starts from the one-at-a-time decision
        at = _canonical(first, slots, stand_in)
        for (si, ti), var in built.x.items():
            host = first.get(built.servers[si].name)
            if host in at:
                built.m.AddHint(var, at[host] == ti)
    # the search ends early enough to check its answer (or the first
    # decision, and that one's cost) within the time limit
    search_for = (by(1 - FINISH_SHARE) - time.monotonic() if wall
                  else time_limit)
    solver, status = _solve(cp_model, built, search_for, workers, seed,
                            deterministic=not wall, gap=gap)
    if status == cp_model.UNKNOWN and first is not None:
        replay(stack, world, clauses, first)
        cost = _cost_of(cp_model, built, first, min(1.0, max(
            0.05, deadline.left())), deterministic=not wall) or 0
        return Decision(True, first, '', time.monotonic() - started,
                        False, cost, stop=LIMIT)
    if status == cp_model.UNKNOWN:
        return out_of_time()
    reason = _failed(cp_model, status, (stack, world, clauses, slots, rcs,
                                        time_limit, workers, seed,
                                        by(1.0), not wall),
                     not_found(deadline))
    if reason is not None:
        return Decision(False, {}, reason, time.monotonic() - started)
    assignments = built.assignments(solver)
    replay(stack, world, clauses, assignments)
    stop = _stopped(cp_model, solver, status, built, gap)
    return Decision(True, assignments, '', time.monotonic() - started,
                    stop in (OPTIMAL, FIRST),
                    int(round(solver.ObjectiveValue())) if built.cost else 0,
                    stop=stop)


def _canonical(assignments: typing.Mapping[str, str],
               slots: typing.Sequence[_Slot],
               stand_in: typing.Mapping[str, typing.Sequence[int]]
               ) -> typing.Dict[str, int]:
    """host -> the slot that stands for it in a hint: the hosts a
    decision uses in a class of interchangeable hosts become the class's
    first slots, in the order the decision first uses them, so that the
    hint meets the model's symmetry breaking (:meth:`_Model._symmetry`:
    slots of a class are used in order); a host dropped as dominated
    takes a free slot of a class that may stand in for it
    (``stand_in``, from :func:`_classes`). A host left with none is left
    out of the hint."""
    klass = {slot.host: slot.klass for slot in slots}
    free: typing.Dict[int, typing.List[int]] = {}
    for ti, slot in enumerate(reversed(slots)):
        free.setdefault(slot.klass, []).append(len(slots) - 1 - ti)
    found: typing.Dict[str, int] = {}
    for host in assignments.values():
        if host in found:
            continue
        classes = [klass[host]] if host in klass else stand_in.get(host, ())
        for k in classes:
            if free.get(k):
                found[host] = free[k].pop()
                break
    return found


def _stopped(cp_model, solver, status, built: _Model, gap: float) -> str:
    """Why the search that found a decision stopped: :data:`FIRST`
    (nothing to improve: no objective), :data:`OPTIMAL` (its cost meets
    the best bound: the costs are integers), :data:`GAP` (CP-SAT says
    ``OPTIMAL`` when it reaches the gap too) or :data:`LIMIT`."""
    if not built.cost:
        return FIRST
    value, bound = solver.ObjectiveValue(), solver.BestObjectiveBound()
    if abs(value - bound) < 1:
        return OPTIMAL
    if status == cp_model.OPTIMAL or (
            gap and abs(value - bound) <= gap * max(1.0, abs(value))):
        return GAP
    return LIMIT


def cost_of(stack: model.Stack, world: World,
            assignments: typing.Mapping[str, str],
            time_limit: float = 30.0) -> typing.Optional[int]:
    """The soft policies' cost of a decision for ``stack`` (the objective
    :func:`decide` minimises; 0 without soft policies), for tools that
    compare decisions; None when the decision's hosts are not all in
    ``world`` or ``time_limit`` seconds do not tell.

    :raises SolverUnavailable: OR-Tools is not installed.
    """
    cp_model = _cp_model()
    world = with_traits(world)
    clauses = compile_stack(stack, world)
    rcs = _resource_classes(stack)
    # each decided host a class of its own: every server's variable there
    slots = _classes(stack, world, clauses, rcs, True,
                     special=frozenset(assignments.values()))
    built = _Model(cp_model, stack, world, clauses, slots, rcs)
    if not built.cost:
        return 0
    return _cost_of(cp_model, built, assignments, time_limit)


def _cost_of(cp_model, built: _Model, assignments: typing.Mapping[str, str],
             time_limit: float = 1.0, deterministic: bool = False
             ) -> typing.Optional[int]:
    """The soft policies' cost of ``assignments`` in ``built`` (0 when it
    has no cost); None when a host is not a slot of the model, or
    ``time_limit`` seconds of wall time (or ``deterministic`` time) do
    not tell."""
    if not built.cost:
        return 0
    slot = {s.host: ti for ti, s in enumerate(built.slots)}
    chosen = [built.x.get((si, slot.get(assignments.get(server.name))))
              for si, server in enumerate(built.servers)]
    if any(var is None for var in chosen):
        return None
    # each server's one variable: ExactlyOne sets the others false
    for var in chosen:
        built.m.Add(var == 1)
    solver, status = _solve(cp_model, built, time_limit, 1, 0,
                            deterministic)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return int(round(solver.ObjectiveValue()))
    return None


@dataclasses.dataclass(frozen=True)
class Reassignment:
    """Hosts for servers that run already (see :func:`reassign`).

    :param feasible: every hard policy and every host's capacity can be
        met.
    :param assignments: server -> host, every server (or none).
    :param moved: servers whose host changes.
    :param reason: when not feasible, which policy or resource stops it.
    :param seconds: time spent.
    :param optimal: the fewest moves are proven fewest (and then the soft
        cost lowest).
    :param cost: the soft policies' objective at the fewest moves.
    :param timed_out: not feasible only because the search ran out of
        time: a repair may still exist.
    """

    feasible: bool
    assignments: typing.Mapping[str, str]
    moved: typing.Tuple[str, ...] = ()
    reason: str = ''
    seconds: float = 0.0
    optimal: bool = False
    cost: int = 0
    timed_out: bool = False


def reassign(servers: typing.Sequence[model.Server], world: World,
             clauses: typing.List[Clause],
             current: typing.Mapping[str, str], time_limit: float = 10.0,
             workers: int = 1, seed: int = 0,
             excluded: typing.Sequence[typing.Sequence[
                 typing.Tuple[str, str, bool]]] = ()) -> Reassignment:
    """Hosts for servers that run already, every hard clause and every
    host's capacity met, moving the fewest servers from ``current``; the
    soft policies' cost is the second objective. The same model as a
    stack's decision (:func:`decide`): only the objective differs.

    :param servers: the servers that may move, named as in ``clauses``.
    :param world: the hosts, their free capacity counting the servers
        where they run now (``current``), the topology.
    :param clauses: the hard and soft documents over the servers.
    :param current: server -> the host it runs on.
    :param excluded: answers ruled out: each a conjunction of
        ``(server, host, on)`` (``server`` is on ``host``, or with
        ``on`` False is not) that no answer may meet in full. Not
        feasible with them is not explained.
    :raises SolverUnavailable: OR-Tools is not installed.
    """
    started = time.monotonic()
    cp_model = _cp_model()
    world = with_traits(world)
    stack = model.Stack('repair', 1, model.Group(
        'servers', 'servers', PolicyDocument(), servers=tuple(servers)))
    rcs = _resource_classes(stack)
    slots = _classes(stack, world, clauses, rcs, True,
                     special=frozenset(current.values()),
                     scopes=frozenset(s for c in clauses
                                      for s in c.document.scopes))
    built = _Model(cp_model, stack, world, clauses, slots, rcs)
    stays = [built.x[si, ti] for (si, ti) in built.x
             if slots[ti].host == current.get(built.servers[si].name)]
    for var in stays:
        built.m.AddHint(var, 1)
    _exclude(built, excluded)
    built.m.Maximize(sum(stays))
    solver, status = _solve(cp_model, built, time_limit, workers, seed)
    if excluded and status == cp_model.INFEASIBLE:
        reason = 'no repair but those ruled out'
    else:
        reason = _failed(cp_model, status, (stack, world, clauses, slots,
                                            rcs, time_limit, workers, seed),
                         f'no repair found in {time_limit:g} s')
    if reason is not None:
        return Reassignment(False, {}, reason=reason,
                            seconds=time.monotonic() - started,
                            timed_out=status != cp_model.INFEASIBLE)
    optimal = status == cp_model.OPTIMAL
    kept = int(round(solver.ObjectiveValue()))
    assignments = built.assignments(solver)
    cost = 0
    if built.cost and optimal:
        # second objective: at the fewest moves, the lowest soft cost
        built.m.Add(sum(stays) >= kept)
        built.m.ClearHints()
        for var in built.x.values():
            built.m.AddHint(var, solver.BooleanValue(var))
        built.m.Minimize(sum(built.cost))
        left = max(0.1, time_limit - (time.monotonic() - started))
        second, status = _solve(cp_model, built, left, workers, seed)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            assignments = built.assignments(second)
            cost = int(round(second.ObjectiveValue()))
            optimal = status == cp_model.OPTIMAL
    moved = tuple(s.name for s in servers
                  if assignments[s.name] != current.get(s.name))
    return Reassignment(True, assignments, moved, '',
                        time.monotonic() - started, optimal, cost)


def _exclude(built: _Model, excluded) -> None:
    """No answer meets any of ``excluded`` in full (see :func:`reassign`):
    a literal no slot can make true rules nothing out, one always true
    is left out."""
    slot_of = {slot.host: ti for ti, slot in enumerate(built.slots)}
    for literals in excluded:
        clause = []
        for name, host, on in literals:
            var = built.x.get((built.index[name], slot_of.get(host)))
            if var is None:
                if on:
                    break
                continue
            clause.append(var.Not() if on else var)
        else:
            built.m.AddBoolOr(clause)


# -- replay through the engine ------------------------------------------------

def replay(stack: model.Stack, world: World, clauses: typing.List[Clause],
           assignments: typing.Mapping[str, str]) -> None:
    """Check a decision server by server with the engine's host checks,
    each server against those checked before it, and every host's
    capacity. Servers go in document order, a server whose check fails
    waiting for the others (a policy that reads the order, such as
    spread's skew, passes in some order when the decision is right).

    :raises DecisionError: naming the server, host and reasons.
    """
    engine = Engine()
    hosts = {h.name: h for h in world.hosts}
    taking: typing.Dict[model.Flavor, typing.FrozenSet[str]] = {}

    def candidates(flavor: model.Flavor) -> typing.FrozenSet[str]:
        """The hosts that take ``flavor`` before the stack: those a
        policy reading candidates (spread) counts as eligible, as the
        solver's model does."""
        found = taking.get(flavor)
        if found is None:
            found = taking[flavor] = frozenset(
                h.name for h in world.hosts if _accepts(flavor, h))
        return found
    flavor_of = {s.name: s.flavor for s in stack.servers}
    used: typing.Dict[str, typing.Counter] = {}
    for server in stack.servers:
        host = assignments.get(server.name)
        state = hosts.get(host)
        if state is None:
            raise DecisionError(f'{server.name}: no host decided')
        if not _accepts(server.flavor, state):
            raise DecisionError(f'{server.name}: {host} does not accept it')
        load = used.setdefault(host, collections.Counter())
        load.update(server.flavor.resources)
        if any(load[rc] > state.free.get(rc, 0) for rc in load):
            raise DecisionError(f'{server.name}: {host} is over capacity')
    placed: typing.Dict[str, str] = {}
    waiting = [s.name for s in stack.servers]
    while waiting:
        failed: typing.Dict[str, typing.List[str]] = {}
        for name in waiting:
            found = check_server(
                clauses, world.topology, placed, name, assignments[name],
                engine, lambda: candidates(flavor_of[name]))
            if found:
                failed[name] = found
            else:
                placed[name] = assignments[name]
        if len(failed) == len(waiting):
            name = waiting[0]
            raise DecisionError(f'{name} on {assignments[name]}: ' +
                                '; '.join(failed[name]))
        waiting = [n for n in waiting if n in failed]
