"""Stacks in a simulation, as the policy service keeps them.

A ``plan`` is decided and held by the one stacks service
(:func:`nova_scoped_policies.stacks.service.decide_and_hold`): the
simulation is its :class:`Source` (the cloud's free capacity,
:class:`~.world.Cloud`), its :class:`Holds` (one atomic ``POST
/allocations`` of hold consumers, :mod:`nova_scoped_policies.placement.
holds`) and its :class:`Decisions` (the decision record in the scratch
policy store, :class:`nova_scoped_policies.db.stacks.StackStore`, as the
policy service creates it). ``boot_plan`` then boots each server as a
tenant does, with the decision's hints: the ``scoped_plan`` request filter
pins it to its decided host and gives its hold back through the store
driver, and the filters check the stack's policies. :func:`audit` is the
stacks' audit at the end.

A plan's limit is deterministic work, not wall time (:func:`deadline`):
the solver's search is bounded by CP-SAT's deterministic time with one
worker and nothing reads the clock, so the same scenario gives the same
plans (and the same JSON, its ``seconds`` aside) on any machine, under
any load and with any number of sweep workers.
"""

import typing

from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.placement import holds
from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.stacks.deadline import Deadline
from nova_scoped_policies.stacks import live
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import service
from nova_scoped_policies.stacks import solver

TIME_LIMIT = 10.0
"""The limit of one plan: seconds of the solver's deterministic work
(CP-SAT's ``max_deterministic_time``, about a second of search each on a
current core), the policy service's default ``stack_time_limit``; and the
seconds a repair may take."""
RELATIVE_GAP = 0.05
"""The relative gap at which a plan's search stops, the policy service's
default ``stack_relative_gap``."""


def deadline() -> Deadline:
    """A plan's limit: :data:`TIME_LIMIT` of deterministic work."""
    return Deadline.work(TIME_LIMIT)


class Plans:
    """The plans of one simulation.

    :param sim: the running :class:`~.runner.Simulation`.
    """

    def __init__(self, sim) -> None:
        self.sim = sim
        # stack name -> what the report says of its last plan
        self.records: typing.Dict[str, dict] = {}
        # stack name -> the id of its last reserved decision
        self.decisions: typing.Dict[str, str] = {}
        self._made = 0

    def store(self) -> stack_db.StackStore:
        return stack_db.StackStore(self.sim.store)

    def next_id(self, entry: sc.StackEntry) -> str:
        """A decision id: the same scenario, the same ids."""
        self._made += 1
        return sc.stable_uuid('stack-decision', f'{entry.name}:{self._made}')

    def real(self, entry: sc.StackEntry) -> model.Stack:
        """The stack with real domain ids.

        :raises PolicyError: a domain its tenant cannot target.
        """
        return model.with_real_ids(entry.stack, self.sim.aggregates.topology,
                                   entry.project)


class Source:
    """:class:`service.WorldSource`: the simulated cloud now."""

    def __init__(self, sim) -> None:
        self.sim = sim

    def world(self, stack: model.Stack,
              deadline: typing.Optional[Deadline] = None) -> solver.World:
        return self.sim.cloud.world()


class Holds:
    """:class:`service.Holder`: holds in the simulation's Placement.

    :param sim: the simulation.
    :param entry: the stack.
    """

    def __init__(self, sim, entry: sc.StackEntry) -> None:
        self.sim = sim
        self.entry = entry

    def hold(self, stack: model.Stack, decision: solver.Decision,
             world: solver.World) -> holds.Hold:
        try:
            return holds.hold(self.sim.placement,
                              service.held_resources(stack, decision, world),
                              self.entry.project, self.sim.USER,
                              stack.lease_seconds)
        except holds.RedecideError:
            raise service.Taken() from None

    def release(self, held: holds.Hold) -> None:
        holds.release(self.sim.placement, held)


class Decisions:
    """:class:`service.Recorder`: the decision record in the scratch
    policy store, as the policy service writes it.

    :param plans: the simulation's plans.
    :param entry: the stack.
    """

    def __init__(self, plans: Plans, entry: sc.StackEntry) -> None:
        self.plans = plans
        self.entry = entry

    def record(self, stack: model.Stack, decision: solver.Decision,
               world: solver.World,
               held: holds.Hold) -> stack_db.StackRecord:
        entry = self.entry
        return self.plans.store().create(stack_db.held_record(
            self.plans.next_id(entry), stack.name, dict(entry.document),
            held, stack.lease_seconds, decision.seconds,
            decision.assignments,
            service.held_resources(stack, decision, world)))


def audit(sim) -> typing.Dict[str, dict]:
    """Every stack of the scenario against where its servers run now
    (:func:`nova_scoped_policies.stacks.live.audit`, the verdicts of the
    policies' own plugins), by stack name."""
    world = sim.cloud.world(hosts=False)
    found = {}
    for name, entry in sim.scenario.stacks.items():
        placed = {s.name: sim.servers[s.name]['host']
                  for s in entry.stack.servers if s.name in sim.servers}
        try:
            found[name] = live.audit(sim.plans.real(entry), world,
                                     placed).to_dict()
        except (model.StackError, PolicyError) as exc:
            found[name] = {'status': 'unknown', 'reason': str(exc),
                           'servers': placed, 'policies': []}
    return found
