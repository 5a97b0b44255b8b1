"""``boot_plan``: boot each server of a stack's decision as a tenant
does, alone and with the decision's hints (``scoped_plan``,
``scoped_plan_member``), through the scheduler's path: the
``scoped_plan`` request filter pins it to its decided host and gives its
hold back, the filters check the stack's policies. A server booted so
appears in ``placements`` or ``failures`` as any other."""

from nova_scoped_policies.simulator.handlers import boot
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.simulator import specs


def servers(sim, request: sc.PlanRequest) -> int:
    return len(sim.scenario.stacks[request.stack].stack.servers)


def handle(sim, request: sc.PlanRequest) -> int:
    entry = sim.scenario.stacks[request.stack]
    decision = sim.plans.decisions.get(entry.name)
    booted = 0
    for server in entry.stack.servers:
        launch = specs.Launch.of_stack_server(entry, server, decision)
        if decision is None:
            # the servers exist but never reach the scheduler
            sim.register(launch)
            sim.fail_servers(launch.servers, None,
                             f'no reserved plan for stack {entry.name}')
        else:
            booted += boot.launch(sim, launch)
    return booted
