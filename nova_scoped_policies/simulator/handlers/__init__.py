"""One handler per kind of scenario request.

The :class:`~nova_scoped_policies.simulator.runner.Simulation` holds the
world (hosts, servers, groups, Placement, the scheduler's path); each
request kind is a function of its own module, ``handle(sim, request) ->
servers placed``, found by the request's ``kind`` in :data:`HANDLERS`, as
the fake Placement has a module of handlers per resource. A new verb adds
a module and a line here.
"""

import typing

from nova_scoped_policies.simulator.handlers import boot
from nova_scoped_policies.simulator.handlers import boot_plan
from nova_scoped_policies.simulator.handlers import confirm
from nova_scoped_policies.simulator.handlers import delete
from nova_scoped_policies.simulator.handlers import fail_host
from nova_scoped_policies.simulator.handlers import membership
from nova_scoped_policies.simulator.handlers import migrate
from nova_scoped_policies.simulator.handlers import plan
from nova_scoped_policies.simulator.handlers import repair
from nova_scoped_policies.simulator.handlers import update_group
from nova_scoped_policies.simulator import scenario as sc

Handler = typing.Callable[[typing.Any, sc.Request], int]
"""``(simulation, request) -> servers placed``."""

HANDLERS: typing.Mapping[str, Handler] = {
    'boot': boot.handle,
    'delete': delete.handle,
    'add_member': membership.handle,
    'remove_member': membership.handle,
    'update_group': update_group.handle,
    'plan': plan.handle,
    'boot_plan': boot_plan.handle,
    'confirm': confirm.handle,
    'migrate': migrate.handle,
    'fail_host': fail_host.handle,
    'repair': repair.handle,
}
"""Scenario request kind -> its handler."""


def handle(sim, request: sc.Request) -> int:
    """Run one request; returns the servers it placed."""
    return HANDLERS[request.kind](sim, request)
