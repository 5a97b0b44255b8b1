"""Carrying a repair plan out: in the request (before 1.4) or as a task.

:func:`carry` takes a plan's moves in waves (moves of one wave touch
different hosts and different targets: their order does not matter),
live-migrating each through Nova, and stops at the first failure or when
``cancelled`` says so between two waves. A task (:class:`Runner`) runs
:func:`carry` in a background thread of the API process that started it,
writing its progress and a heartbeat to the policy store, so that any API
process can show it, cancel it, or find it interrupted.
"""

import concurrent.futures
import dataclasses
import threading
import typing

from oslo_log import log as logging

from nova_scoped_policies.api import moves as moves_mod
from nova_scoped_policies.db import repair_tasks as task_db
from nova_scoped_policies.repair import planner

LOG = logging.getLogger(__name__)
BEAT = 5.0
"""Seconds between two heartbeats of a running task."""


@dataclasses.dataclass
class Carried:
    """How far a plan got.

    :param done: the moves done, in order.
    :param failed: (the move, why, where the server is) of the first
        failure, or None.
    :param left: the moves not taken.
    :param cancelled: a cancel stopped it.
    """

    done: typing.List[planner.Move]
    failed: typing.Optional[typing.Tuple[planner.Move, str,
                                         typing.Optional[str]]]
    left: typing.List[planner.Move]
    cancelled: bool = False


def waves(moves: typing.Sequence[planner.Move], problem: planner.Problem,
          most: int) -> typing.Iterator[typing.List[planner.Move]]:
    """The moves in order, in waves of at most ``most`` that touch
    different hosts and different targets."""
    # a server may be in a group and a stack: every target it is in
    targets_of: typing.Dict[str, typing.Set[str]] = {}
    for target in problem.targets + problem.kept:
        for server in target.servers:
            targets_of.setdefault(server, set()).add(target.id)
    wave: typing.List[planner.Move] = []
    hosts: typing.Set[str] = set()
    targets: typing.Set[str] = set()
    for move in moves:
        touched = {move.source, move.destination}
        mine = targets_of.get(move.server, set())
        if wave and (len(wave) >= most or touched & hosts
                     or mine & targets):
            yield wave
            wave, hosts, targets = [], set(), set()
        wave.append(move)
        hosts |= touched
        targets |= mine
    if wave:
        yield wave


def _one(mover: moves_mod.NovaMoves, move: planner.Move,
         timeout: float) -> moves_mod.Outcome:
    try:
        mover.start(move.server, move.destination)
        return mover.wait(move.server, move.destination, timeout)
    except moves_mod.MoveError as exc:
        return moves_mod.Outcome(False, move.source, str(exc))


def carry(mover: moves_mod.NovaMoves, moves: typing.Sequence[planner.Move],
          problem: planner.Problem, most: int, timeout: float,
          running: typing.Callable[[typing.List[planner.Move],
                                    typing.List[planner.Move]], bool]
          = lambda done, current: False,
          wait: typing.Callable[[typing.Any], bool] = None) -> Carried:
    """Take ``moves`` in waves of at most ``most``; stop at the first
    failure, or before a wave when ``running(done, current)`` (called as
    each wave starts and ends) says a cancel was asked.

    :param wait: waits on a wave's futures (a heartbeat between), default
        until they are done.
    """
    done: typing.List[planner.Move] = []
    left = list(moves)
    failed = None
    with concurrent.futures.ThreadPoolExecutor(most) as pool:
        for wave in waves(moves, problem, most):
            if running(done, wave):
                return Carried(done, None, left, True)
            futures = [pool.submit(_one, mover, m, timeout) for m in wave]
            if wait is not None:
                wait(futures)
            for move, future in zip(wave, futures):
                outcome = future.result()
                left.remove(move)
                if outcome.ok:
                    done.append(move)
                elif failed is None:
                    failed = (move, outcome.reason[:300], outcome.host)
            if failed is not None:
                running(done, [])
                return Carried(done, failed, left)
    # a cancel asked during the last wave came too late: all is done
    running(done, [])
    return Carried(done, None, left)


class Runner:
    """Runs one task in a background thread of this process.

    :param tasks: the task store.
    :param task: the task's record (running, its servers claimed).
    :param show: a move as the task shows it.
    :param stopping: set when the service stops (the task ends
        interrupted after its running moves).
    """

    def __init__(self, tasks: task_db.TaskStore, task: task_db.TaskRecord,
                 show: typing.Callable[[planner.Move], dict],
                 stopping: threading.Event, done_hook=None) -> None:
        self.tasks = tasks
        self.task = task
        self.show = show
        self.stopping = stopping
        self.done_hook = done_hook

    def _running(self, done, current) -> bool:
        cancel = self.tasks.progress(
            self.task.id, [self.show(m) for m in done],
            [self.show(m) for m in current])
        return cancel or self.stopping.is_set()

    def _wait(self, futures) -> None:
        while True:
            finished, pending = concurrent.futures.wait(futures, BEAT)
            if not pending:
                return
            self.tasks.beat(self.task.id)

    def run(self, mover, moves, problem, most, timeout) -> None:
        status, done, failed = task_db.INTERRUPTED, [], None
        try:
            found = carry(mover, moves, problem, most, timeout,
                          self._running, self._wait)
            done = [self.show(m) for m in found.done]
            if found.failed is not None:
                move, reason, host = found.failed
                status = task_db.STOPPED
                failed = {'move': self.show(move), 'reason': reason,
                          'host': host}
            elif found.cancelled:
                status = (task_db.INTERRUPTED if self.stopping.is_set()
                          else task_db.CANCELLED)
            else:
                status = task_db.APPLIED
        except Exception:  # the task ends said, whatever happened
            LOG.exception('Repair task %s failed', self.task.id)
            failed = {'move': None, 'reason': 'the service failed while '
                      'carrying the plan out (see its log)', 'host': None}
            status = task_db.STOPPED
        finally:
            record = self.tasks.finish(self.task.id, status, done, failed)
            if self.done_hook is not None:
                self.done_hook(record)

    def start(self, *args) -> threading.Thread:
        thread = threading.Thread(target=self.run, args=args,
                                  name=f'repair-task-{self.task.id}',
                                  daemon=True)
        thread.start()
        return thread
