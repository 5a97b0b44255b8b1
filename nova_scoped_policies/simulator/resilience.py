"""Resilience: what if a domain fails (shared/contracts/simulation.md).

A ``resilience`` request asks, of the world the requests before it left,
what happens when ``count`` domains of a scope fail at once, for every
such combination or a seeded sample of them. Each combination is a
*case*: its domains' hosts go down (as ``fail_host``), their servers are
evacuated through the scheduler one by one in natural name order (every
policy checked as on any move), every group and stack is audited, and
the world is put back as it was: the case's moves are undone, its hosts
come back up, its records go. A case *survives* when every evacuated
server found a host and no hard policy is broken that was not broken
before; with ``groups``, only those groups' servers and policies count.

:func:`run_case` runs one case on a simulation and returns its
:class:`Outcome`; :func:`summary` makes the report of a sweep's outcomes.
Where the cases run (in this process, on local worker processes, on a
Dask cluster) is :mod:`.sweep`'s business: the outcomes are the same.
"""

import collections
import dataclasses
import itertools
import math
import random
import re
import typing

from nova_scoped_policies.engine import audit as audit_mod
from nova_scoped_policies import identifiers
from nova_scoped_policies.simulator import moves
from nova_scoped_policies.simulator import plans as plans_mod
from nova_scoped_policies.simulator import report
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.simulator import specs

_REASONS = 2
"""How many of a failed evacuation's most common reasons its line names."""
_NOT_REASONS = (specs.DOWN, specs.OWN_HOST)
"""What hosts say that tells nothing of why a server has no place."""


def domains(scenario: sc.Scenario, topology, scope: str
            ) -> typing.Dict[str, typing.FrozenSet[str]]:
    """Domain name -> its hosts, for each domain of ``scope`` (each host
    its own for ``host``), in natural name order."""
    if scope == 'host':
        found = {h.name: frozenset((h.name,)) for h in scenario.hosts}
    else:
        found = {d.name: frozenset(d.hosts) for d in topology.domains(scope)}
    return dict(sorted(found.items(),
                       key=lambda item: report.natural(item[0])))


def cases(names: typing.Sequence[str], count: int,
          limit: typing.Optional[int], seed: int
          ) -> typing.List[typing.Tuple[str, ...]]:
    """The cases of a sweep: every combination of ``count`` of ``names``
    (in their order), or, when there are more than ``limit``, ``limit``
    of them drawn with ``seed`` (the same draw on any machine), in the
    order of all combinations."""
    total = math.comb(len(names), count)
    if limit is None or limit >= total:
        return list(itertools.combinations(names, count))
    drawn = sorted(random.Random(seed).sample(range(total), limit))
    return [_unrank(names, count, rank) for rank in drawn]


def _unrank(names: typing.Sequence[str], count: int, rank: int
            ) -> typing.Tuple[str, ...]:
    """The ``rank``-th combination of ``count`` of ``names`` in
    :func:`itertools.combinations` order, without listing the ones
    before it."""
    chosen = []
    start = 0
    for left in range(count, 0, -1):
        for at in range(start, len(names)):
            below = math.comb(len(names) - at - 1, left - 1)
            if rank < below:
                chosen.append(names[at])
                start = at + 1
                break
            rank -= below
    return tuple(chosen)


@dataclasses.dataclass
class Outcome:
    """What one case did.

    :param domains: the domains that failed.
    :param unplaced: evacuated servers no host took (those that count).
    :param groups: group -> why it is broken (its servers no host took,
        its hard policies newly broken).
    :param stacks: stack -> its policies newly broken.
    :param soft: group -> its evacuated servers that now go against its
        soft policies.
    :param headroom: resource class -> what is left on the hosts still
        up after the evacuations (None when not asked).
    """

    domains: typing.Tuple[str, ...]
    unplaced: typing.List[str]
    groups: typing.Dict[str, typing.List[str]]
    stacks: typing.Dict[str, typing.List[str]]
    soft: typing.Dict[str, int]
    headroom: typing.Optional[typing.Dict[str, int]] = None

    @property
    def survived(self) -> bool:
        return not (self.unplaced or self.groups or self.stacks)


class Baseline:
    """What the world is before any case: each group's and stack's
    violations (a case is judged on those it adds), and, for headroom,
    what each host still has.

    :param sim: the simulation, as the requests before the sweep left
        it.
    :param headroom: read what each host has left (N-1 sweeps).
    """

    def __init__(self, sim, headroom: bool) -> None:
        self.violations = {name: {same(v) for v in data['violations']}
                           for name, data in sim.audit().items()}
        self.stack_violations = {name: {same(v) for v in found}
                                 for name, found in
                                 _stack_violations(sim).items()}
        # host -> resource class -> what Placement would still allocate
        self.free = sim.hosts.left() if headroom else {}


_COUNTS = re.compile(r'(?<![\w.-])\d+(?![\w.-])')
_LISTS = re.compile(r'\s*\([^()]*\)')


def same(violation: str) -> str:
    """What a violation is, whatever its counts: the policy and the
    domain it names, without its numbers and the members it lists
    (``anti-affinity:rack: rack-6 holds # of max #``). A case that
    leaves a violation the world already had with other numbers (fewer
    members in the rack once some are evacuated) breaks nothing new; the
    scheduler's filters let no evacuation make one worse."""
    return _COUNTS.sub('#', _LISTS.sub('', violation))


def _stack_violations(sim) -> typing.Dict[str, typing.Set[str]]:
    if not sim.scenario.stacks:
        return {}
    return {name: {f'{p["field"]}: {v}' for p in data['policies']
                   for v in p['violations']}
            for name, data in plans_mod.audit(sim).items()}


def run_cases(sim, request: sc.Resilience,
              cases: typing.Iterable[typing.Tuple[str, ...]],
              failing: typing.Mapping[str, typing.FrozenSet[str]],
              baseline: Baseline) -> typing.List[Outcome]:
    """:func:`run_case` of each case (``failing``: domain -> its hosts)."""
    return [run_case(sim, request, case,
                     frozenset().union(*(failing[d] for d in case)),
                     baseline)
            for case in cases]


def run_case(sim, request: sc.Resilience, failed: typing.Tuple[str, ...],
             hosts: typing.FrozenSet[str], baseline: Baseline) -> Outcome:
    """One case: ``hosts`` (the hosts of the ``failed`` domains) go down,
    their servers are evacuated, the groups and stacks audited; then the
    world is put back as it was.

    :param sim: the simulation, inside its scheduler.
    :param request: the sweep's request.
    :param failed: the case's domains.
    :param hosts: their hosts.
    :param baseline: the world's state before any case.
    """
    moves_at, failures_at = len(sim.moves), len(sim.failures)
    newly_down = hosts - sim.down
    sim.down.update(hosts)
    try:
        moves.evacuate(sim, hosts)
        return _judge(sim, request, failed, hosts, baseline,
                      sim.moves[moves_at:], sim.failures[failures_at:])
    finally:
        for move in reversed(sim.moves[moves_at:]):
            moves.move_back(sim, move['server'], move['from'])
        del sim.moves[moves_at:]
        del sim.failures[failures_at:]
        sim.down.difference_update(newly_down)


def _judge(sim, request: sc.Resilience, failed, hosts, baseline: Baseline,
           moved: typing.List[dict], failures: typing.List[dict]
           ) -> Outcome:
    group_of = {server: name for name, record in sim.groups.items()
                for server in record['members']}
    wanted = set(request.groups) if request.groups else None

    def counts(server: str) -> bool:
        return wanted is None or group_of.get(server) in wanted

    unplaced = [f['server'] for f in failures if counts(f['server'])]
    broken: typing.Dict[str, typing.List[str]] = collections.defaultdict(
        list)
    for failure in failures:
        group = group_of.get(failure['server'])
        if group is not None and counts(failure['server']):
            broken[group].append(_no_host(failure))
    for name, data in sim.audit().items():
        if wanted is None or name in wanted:
            broken[name].extend(v for v in data['violations']
                                if same(v) not in baseline.violations[name])
    stacks = {}
    if wanted is None:
        for name, found in _stack_violations(sim).items():
            before = baseline.stack_violations.get(name, set())
            new = sorted(v for v in found if same(v) not in before)
            if new:
                stacks[name] = new
    return Outcome(
        tuple(failed), unplaced, {g: v for g, v in broken.items() if v},
        stacks, _soft(sim, moved, group_of, counts),
        _headroom(sim, hosts, moved, baseline) if request.count == 1
        else None)


def _no_host(failure: dict) -> str:
    """``POLICY: no legal host for SERVER (N hosts: REASON; ...)``: the
    most common reasons the hosts gave, the first one's policy first."""
    seen: typing.Counter[str] = collections.Counter()
    for reasons in failure['rejections'].values():
        for reason in reasons[:1]:
            if reason not in _NOT_REASONS:
                seen[reason] += 1
    top = seen.most_common(_REASONS)
    if not top:
        return f'no legal host for {failure["server"]} ({failure["reason"]})'
    policy = top[0][0].split(': ', 1)[0]
    said = '; '.join(f'{n} hosts: {reason}' for reason, n in top)
    return f'{policy}: no legal host for {failure["server"]} ({said})'


def _soft(sim, moved: typing.List[dict], group_of: typing.Mapping[str, str],
          counts: typing.Callable[[str], bool]) -> typing.Dict[str, int]:
    """Group -> how many of its evacuated servers now go against its soft
    policies (each policy plugin's verdict)."""
    topology = sim.aggregates.topology
    by_group: typing.Dict[str, typing.List[str]] = collections.defaultdict(
        list)
    for move in moved:
        group = group_of.get(move['server'])
        if group is not None and counts(move['server']):
            by_group[group].append(move['server'])
    found = {}
    for name, servers in by_group.items():
        record = sim.groups[name]
        document = identifiers.to_real(
            record['document'], topology,
            sim.scenario.groups[name].project, strict=False)
        placements = {s: sim.servers[s]['host'] for s in record['members']
                      if s in sim.servers}
        against = audit_mod.against_soft(document, topology, placements,
                                         servers)
        if against:
            found[name] = len(against)
    return found


def _headroom(sim, hosts, moved: typing.List[dict], baseline: Baseline
              ) -> typing.Dict[str, int]:
    """What the hosts still up have left after the case's evacuations."""
    left: typing.Counter[str] = collections.Counter()
    for host, free in baseline.free.items():
        if host not in hosts and host not in sim.down:
            left.update(free)
    for move in moved:
        left.subtract(sim.servers[move['server']]['resources'])
    return dict(sorted(left.items()))


def summary(request: sc.Resilience, outcomes: typing.Sequence[Outcome],
            seconds: float) -> dict:
    """The report of a sweep (the contract's ``resilience`` entry)."""
    broken = sorted((o for o in outcomes if not o.survived),
                    key=lambda o: (-len(o.unplaced), -len(o.groups),
                                   [report.natural(d) for d in o.domains]))
    groups: typing.Counter[str] = collections.Counter(
        g for o in broken for g in o.groups)
    entries = []
    for o in broken:
        entry = {'domains': list(o.domains), 'unplaced': o.unplaced,
                 'groups': o.groups, 'soft': o.soft}
        if o.stacks:
            entry['stacks'] = o.stacks
        entries.append(entry)
    found = {
        'fail': request.fail, 'count': request.count,
        'cases': len(outcomes),
        'survived': sum(o.survived for o in outcomes),
        'seconds': round(seconds, 3), 'broken': entries,
        'groups': {g: {'broken_in': n, 'of': len(outcomes)}
                   for g, n in sorted(groups.items(),
                                      key=lambda i: report.natural(i[0]))},
        'headroom': ({o.domains[0]: o.headroom for o in outcomes}
                     if request.count == 1 else {})}
    if request.groups:
        found['only'] = list(request.groups)
    if request.cases is not None:
        found['seed'] = request.seed
    return found
