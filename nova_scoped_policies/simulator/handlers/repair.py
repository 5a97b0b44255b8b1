"""``repair``: plan the fewest moves that end every hard violation of a
group, a stack, or every group and stack, with the repair planner
(:func:`nova_scoped_policies.repair.planner.plan`), and carry them out in
order, each through the scheduler as a move to a named host.

The planner reads the simulated cloud: every host that is up with the
capacity Placement would still allocate, the targets' servers where they
run (a server of a broken target that sits on a host that is down is
moved off it; others stay), and the targets' clauses
over server names, so that its moves and reasons name servers as the
scenario does. A move the filters refuse ends the repair there: it is
``impossible``, the moves before it stay made.
"""

import typing

from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.repair import planner
from nova_scoped_policies.simulator import moves
from nova_scoped_policies.simulator import plans as plans_mod
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.stacks import model


def handle(sim, request: sc.Repair) -> int:
    found = {'target': request.target, 'moves': []}
    try:
        plan = planner.plan(_problem(sim, request), plans_mod.TIME_LIMIT)
    except (model.StackError, PolicyError) as exc:
        found.update(status=planner.IMPOSSIBLE, reason=str(exc), seconds=0.0)
        sim.repairs.append(found)
        return 0
    found.update(status=plan.status, reason=plan.reason,
                 seconds=round(plan.seconds, 3))
    for i, step in enumerate(plan.moves):
        if not moves.move(sim, step.server, moves.REPAIR, step.destination):
            found.update(status=planner.IMPOSSIBLE, reason=(
                f'moves[{i}]: the scheduler refused {step.server} on '
                f'{step.destination} (see failures); the moves before it '
                'were made'))
            break
        found['moves'].append(step.to_dict())
    sim.repairs.append(found)
    return 0


def _problem(sim, request: sc.Repair) -> planner.Problem:
    """The planner's problem: the cloud now and the targets asked for."""
    targets = _groups(sim, request) + _stacks(sim, request)
    cloud = sim.cloud
    hosts = tuple(planner.Host(h.name, cloud.free(h), cloud.traits(h),
                               h.uuid) for h in cloud.hosts())
    servers = {name: _server(sim, name)
               for name in sorted({s for t in targets for s in t.servers})}
    return planner.Problem(hosts, servers, tuple(targets),
                           sim.aggregates.topology)


def _running(sim, names: typing.Iterable[str]) -> typing.List[str]:
    return [n for n in names if n in sim.servers and sim.servers[n]['host']]


def _groups(sim, request: sc.Repair) -> typing.List[planner.Target]:
    """Each group asked for: its policies (real ids) over its members
    that run (Nova's and those added through the policy service)."""
    if request.stack is not None:
        return []
    names = [request.group] if request.group else list(sim.groups)
    found = []
    for name in names:
        group = sim.scenario.groups[name]
        record = sim.groups[name]
        found.append(planner.Target.group(
            name, sim.real(group.project, record['document']),
            _running(sim, record['members'])))
    return found


def _stacks(sim, request: sc.Repair) -> typing.List[planner.Target]:
    """Each decided stack asked for: its clauses over its servers that
    run (a stack with no decision has none)."""
    if request.group is not None:
        return []
    names = [request.stack] if request.stack else list(sim.scenario.stacks)
    world = sim.cloud.world(hosts=False)
    found = []
    for name in names:
        if name not in sim.plans.decisions:
            continue
        entry = sim.scenario.stacks[name]
        running = _running(sim, (s.name for s in entry.stack.servers))
        found.append(planner.Target.stack(
            name, sim.plans.real(entry), world,
            {s: s for s in running}))
    return found


def _server(sim, name: str) -> planner.Server:
    record = sim.servers[name]
    required, forbidden = record['launch'].traits()
    return planner.Server(name, record['host'], dict(record['resources']),
                          required, forbidden)
