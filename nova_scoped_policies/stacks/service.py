"""The one way a stack is decided: decide, hold, decide again, record.

Pure (no nova, HTTP or CONF): the policy service and the simulator each
give it what it reads and writes through three small protocols, and
share everything else::

    outcome = service.decide_and_hold(stack, source, holder, recorder,
                                      time_limit=10.0)

* :class:`WorldSource` builds the :class:`~.solver.World` a decision reads
  (hosts with their free capacity, :func:`free_capacity`; topology;
  existing servers of relationships).
* :class:`Holder` holds a decision in Placement, all or nothing, and
  raises :class:`Taken` when the capacity moved meanwhile; the service
  then decides once more from a fresh world.
* :class:`Recorder` records the held decision; when it fails, the holds
  are released (nothing half-written).
"""

import dataclasses
import os
import typing

from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver

ATTEMPTS = 2
"""Decisions tried before a stack whose capacity keeps moving is refused."""


def free_capacity(total: int, used: int, reserved: int = 0,
                  allocation_ratio: float = 1.0) -> int:
    """What Placement would still allocate of one resource class of a
    provider: ``(total - reserved) * allocation_ratio - used`` (the
    capacity of its provider summaries, less the usage)."""
    return int((total - reserved) * allocation_ratio) - used


class Taken(Exception):
    """Placement refused the hold: capacity was taken or a consumer
    changed while deciding. Nothing is held; decide again."""


class Infeasible(Exception):
    """The stack does not fit (or no decision was found in time).

    :param reason: which policy or resource, never another tenant's.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class WorldSource(typing.Protocol):
    def world(self, stack: model.Stack) -> solver.World:
        """What a decision for ``stack`` reads, now."""


class Holder(typing.Protocol):
    def hold(self, stack: model.Stack, decision: solver.Decision,
             world: solver.World) -> typing.Any:
        """Hold every server of ``decision`` in Placement at once.

        :returns: the hold (whatever :meth:`release` takes back).
        :raises Taken: Placement refused it; nothing is held.
        """

    def release(self, held: typing.Any) -> None:
        """Give the whole hold back."""


class Recorder(typing.Protocol):
    def record(self, stack: model.Stack, decision: solver.Decision,
               world: solver.World, held: typing.Any) -> typing.Any:
        """Record a held decision; returns the record."""


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A decided, held and recorded stack.

    :param decision: the solver's decision.
    :param world: the world it was made on.
    :param held: the hold.
    :param record: what the recorder returned.
    :param attempts: decisions made (more than one when a hold was
        refused).
    """

    decision: solver.Decision
    world: solver.World
    held: typing.Any
    record: typing.Any
    attempts: int = 1


def decide_and_hold(stack: model.Stack, source: WorldSource,
                    holder: Holder, recorder: Recorder,
                    time_limit: float = 10.0,
                    attempts: int = ATTEMPTS, workers: int = 1) -> Outcome:
    """Decide the whole stack, hold it, record it.

    :param stack: the validated stack, real ids.
    :param time_limit: seconds the solver may take per decision.
    :param attempts: decisions tried when holds are refused.
    :param workers: the solver's search workers (0: every core).
    :raises Infeasible: the stack does not fit, or its capacity was taken
        while deciding ``attempts`` times.
    :raises model.StackError: the stack names an undefined scope, scopes
        that do not nest, or unknown existing resources.
    :raises solver.SolverUnavailable: OR-Tools is not installed.
    """
    for attempt in range(1, attempts + 1):
        world = source.world(stack)
        decision = solver.decide(stack, world, time_limit,
                                 workers=workers or _cores())
        if not decision.feasible:
            raise Infeasible(decision.reason)
        try:
            held = holder.hold(stack, decision, world)
        except Taken:
            continue
        try:
            record = recorder.record(stack, decision, world, held)
        except BaseException:
            holder.release(held)
            raise
        return Outcome(decision, world, held, record, attempt)
    raise Infeasible('the capacity it needs was taken while deciding, '
                     f'{attempts} times; try again')


def held_resources(stack: model.Stack, decision: solver.Decision,
                   world: solver.World
                   ) -> typing.Dict[str, typing.Tuple[str, typing.Dict[
                       str, int]]]:
    """server name -> (its host's provider, what to hold for it): the
    body of a hold."""
    providers = {h.name: h.provider for h in world.hosts}
    return {s.name: (providers[decision.assignments[s.name]],
                     {rc: n for rc, n in s.flavor.resources.items() if n})
            for s in stack.servers}


def _cores() -> int:
    """The cores this process may run on (its CPU affinity, which a
    container or ``taskset`` narrows; ``os.cpu_count`` counts the
    machine's)."""
    return len(os.sched_getaffinity(0))
