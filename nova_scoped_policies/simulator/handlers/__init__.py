"""One handler per kind of scenario request.

The :class:`~nova_scoped_policies.simulator.runner.Simulation` holds the
world (hosts, servers, groups, Placement) and its changes (``register``,
``placed``, ``moved``, ``forget``, ``leave``, ``fail_servers``), and
``sim.nova`` (:class:`~.scheduling.NovaScheduler`) is nova-scheduler's
path; each request kind is a module of its own, owning what a request of
that kind does with them, found by the request's ``kind`` in
:data:`MODULES`, as the fake Placement has a module of handlers per
resource: ``handle(sim, request) -> servers placed`` runs a request, and
a kind that boots servers says how many with ``servers(sim, request)``
(the progress bar's; 0 without it). A new verb adds a module and a line
here.
"""

import importlib
import typing

from nova_scoped_policies.simulator import scenario as sc

Handler = typing.Callable[[typing.Any, sc.Request], int]
"""``(simulation, request) -> servers placed``."""

MODULES: typing.Mapping[str, str] = {
    'boot': 'boot',
    'delete': 'delete',
    'add_member': 'membership',
    'remove_member': 'membership',
    'update_group': 'update_group',
    'plan': 'plan',
    'boot_plan': 'boot_plan',
    'confirm': 'confirm',
    'migrate': 'migrate',
    'fail_host': 'fail_host',
    'repair': 'repair',
    'resilience': 'resilience',
}
"""Scenario request kind -> the module of its handler (here), imported
when a request of that kind first runs: a scenario pays at start-up only
for the kinds it has (no repair planner without repairs)."""


def _module(kind: str):
    return importlib.import_module(f'{__name__}.{MODULES[kind]}')


def handler(kind: str) -> Handler:
    """The handler of requests of ``kind``."""
    return _module(kind).handle


def handle(sim, request: sc.Request) -> int:
    """Run one request; returns the servers it placed."""
    return handler(request.kind)(sim, request)


def servers(sim, request: sc.Request) -> int:
    """How many servers a request boots (placed or failed)."""
    count = getattr(_module(request.kind), 'servers', None)
    return count(sim, request) if count is not None else 0
