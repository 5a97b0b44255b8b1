"""``repair``: plan the fewest moves that end every hard violation of a
group, a stack, or every group and stack, with the repair service of the
policy API and Watcher (:func:`nova_scoped_policies.repair.service.
plan`), and carry them out in order, each through the scheduler as a
move to a named host.

The service reads the simulated cloud (:func:`cloud`), as the policy
API's wide read: every host that is up with the capacity Placement would
still allocate, every server that runs on one, every group (its members
that run) and every decided stack, each named as the scenario names it so
that moves and reasons do too. The targets' servers move; any other
server may move to make room, each such move keeping every hard policy of
its own groups and stacks (a server of a broken target that sits on a
host that is down is moved off it; other servers there stay out of the
plan). A move the filters refuse ends the repair there: it is
``impossible``, the moves before it stay made.
"""

import typing

from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.repair import planner
from nova_scoped_policies.repair import service
from nova_scoped_policies.simulator import moves
from nova_scoped_policies.simulator import plans as plans_mod
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.stacks import model


def handle(sim, request: sc.Repair) -> int:
    found = {'target': request.target, 'moves': []}
    try:
        plan = service.plan(lambda wide: cloud(sim), _asked(request),
                            service.ADMIN, plans_mod.TIME_LIMIT).plan
    except (model.StackError, PolicyError, service.Unreadable) as exc:
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


def _asked(request: sc.Repair) -> service.Asked:
    if request.group is not None:
        return service.Asked(service.GROUP, request.group)
    if request.stack is not None:
        return service.Asked(service.STACK, request.stack)
    return service.Asked()


def cloud(sim) -> service.Cloud:
    """The simulated cloud now, whole (the scenario's names for groups,
    stacks and servers).

    :raises PolicyError: a group's policies name a domain its tenant
        cannot target.
    """
    world = sim.cloud
    hosts = tuple(planner.Host(h.name, world.free(h), world.traits(h),
                               h.uuid) for h in world.hosts())
    servers = {}
    for name, record in sim.servers.items():
        if record['host']:
            required, forbidden = record['launch'].traits()
            servers[name] = service.Server(
                name, record['host'], dict(record['resources']),
                record['launch'].project, required, forbidden)
    groups = tuple(service.Group(
        name, sim.scenario.groups[name].project,
        sim.real(sim.scenario.groups[name].project, record['document']),
        tuple(_running(sim, record['members'])))
        for name, record in sim.groups.items())
    ends = world.world(hosts=False)
    stacks = tuple(service.Stack(
        name, entry.project, entry.document,
        {s: s for s in _running(sim, (s.name for s in entry.stack.servers))},
        ends.servers, ends.server_groups)
        for name, entry in sim.scenario.stacks.items()
        if name in sim.plans.decisions)
    return service.Cloud(hosts, servers, groups, stacks,
                         sim.aggregates.topology)


def _running(sim, names: typing.Iterable[str]) -> typing.List[str]:
    return [n for n in names if n in sim.servers and sim.servers[n]['host']]
