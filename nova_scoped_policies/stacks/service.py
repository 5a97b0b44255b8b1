"""The one way a stack is decided: decide, hold, decide again, record.

Pure (no nova, HTTP or CONF): the policy service and the simulator each
give it what it reads and writes through three small protocols, and
share everything else::

    outcome = service.decide_and_hold(stack, source, holder, recorder,
                                      deadline=Deadline.wall(10.0))

The :class:`~.deadline.Deadline` is the request's, from its start to its
answer: reading the world, the solver (what is left, less
:func:`reserve`, kept for the hold and the record), the hold and the
record all spend it.

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

from nova_scoped_policies.stacks.deadline import Deadline
from nova_scoped_policies.stacks.deadline import not_found
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver

ATTEMPTS = 2
"""Decisions tried before a stack whose capacity keeps moving is refused."""
HOLD_SHARE = 0.1
"""The share of a decision's limit kept, after the solver, for holding
the decision in Placement (one atomic ``POST /allocations``) and
recording it: the solver ends that much before the deadline, or
:data:`HOLD_PER_SERVER` a server before it when that is more."""
HOLD_PER_SERVER = 0.003
"""Seconds kept per server of the stack for its hold and record, when
that is more than :data:`HOLD_SHARE` of the limit: Placement checks a
``POST /allocations`` consumer by consumer (2.7 s for 1,000 servers in
the benchmark's Placement on the 2-core machine)."""


def reserve(stack: model.Stack, deadline: Deadline) -> float:
    """Seconds of ``deadline`` kept after the solver for the hold and
    the record of ``stack``."""
    return max(deadline.seconds * HOLD_SHARE,
               HOLD_PER_SERVER * len(stack.servers))


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
    """The stack does not fit.

    :param reason: which policy or resource, never another tenant's.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class NotFoundInTime(Exception):
    """The limit cut the decision short before any was found: the stack
    may still fit (never called infeasible).

    :param reason: ``not found within the limit: may still fit (...)``.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class WorldSource(typing.Protocol):
    def world(self, stack: model.Stack, deadline: Deadline) -> solver.World:
        """What a decision for ``stack`` reads, now; a source that reads
        in several calls stops between two once ``deadline`` is past
        (the world it returns is then not read through: the service
        answers :class:`NotFoundInTime` without deciding)."""


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
                    attempts: int = ATTEMPTS, workers: int = 1,
                    deadline: typing.Optional[Deadline] = None,
                    gap: float = 0.0) -> Outcome:
    """Decide the whole stack, hold it, record it, by ``deadline``.

    :param stack: the validated stack, real ids.
    :param time_limit: seconds from this call to the answer, when no
        ``deadline`` is given.
    :param attempts: decisions tried when holds are refused.
    :param workers: the solver's search workers (0: every core).
    :param deadline: the request's (from its start): every attempt's
        world, decision, hold and record spend it; the solver ends
        :func:`reserve` before it. Deterministic work
        (:meth:`Deadline.work`) bounds only the searches, each attempt
        the same.
    :param gap: the relative gap at which a search stops
        (:func:`solver.decide`).
    :raises Infeasible: the stack does not fit, or its capacity was taken
        while deciding ``attempts`` times.
    :raises NotFoundInTime: the limit ran out before a decision was found
        (reading the world included): the stack may still fit.
    :raises model.StackError: the stack names an undefined scope, scopes
        that do not nest, or unknown existing resources.
    :raises solver.SolverUnavailable: OR-Tools is not installed.
    """
    if deadline is None:
        deadline = Deadline.wall(time_limit)
    solving = deadline.before(reserve(stack, deadline))
    for attempt in range(1, attempts + 1):
        world = source.world(stack, deadline)
        if solving.past():
            raise NotFoundInTime(not_found(deadline, (
                f'{deadline.spent():.1f} s spent reading the cloud'
                if attempt == 1 else 'the capacity it needed was taken '
                'while deciding')))
        decision = solver.decide(stack, world, workers=workers or _cores(),
                                 deadline=solving, gap=gap)
        if decision.timed_out:
            raise NotFoundInTime(decision.reason)
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
