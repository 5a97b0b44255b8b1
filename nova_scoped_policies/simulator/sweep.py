"""Where the cases of a resilience sweep run: in this process, on local
worker processes, or on a Dask cluster (Dask ``distributed``).

The cases of a sweep are independent what-ifs of one world, so they run
on :class:`distributed.Client` workers as Dask tasks, a few cases each
(:func:`.sweep_worker.cases`, which runs each case with
:func:`.resilience.run_case`: the world is put back after each).

* A local cluster (``--workers N``) forks its worker processes from this
  one once the requests before the sweep have run: each starts with this
  process's world (copied on write), and building it again costs
  nothing.
* The workers of a running ``dask scheduler`` (``--scheduler``) get the
  scenario (scattered to them once) and the index of the resilience
  request with their tasks: each worker process builds the world the
  requests before that one leave (:meth:`.runner.Simulation.before`) once
  and keeps it for the sweep's next tasks.

A worker that dies mid-sweep costs its tasks a retry on another worker
(Dask's scheduler runs a lost task again; a local cluster forks a new
worker); every case gives the same outcome wherever it runs, so the
report is the same with any number of workers.

A sweep of fewer than :data:`IN_PROCESS_BELOW` cases, ``--workers 0``, a
machine that lets this process use one core, a simulation on a real
Placement (``--placement-url``: workers cannot rebuild it) and a process
whose threads eventlet patched run in this process instead. A
``--scheduler`` is never replaced by this process: one that does not
answer, or has no worker, is an error (:class:`Unreachable`).
"""

import concurrent.futures
import contextlib
import importlib.util
import dataclasses
import logging
import math
import os
import sys
import typing
import uuid

from nova_scoped_policies.simulator import resilience
from nova_scoped_policies.simulator import sweep_worker as worker

IN_PROCESS_BELOW = 8
"""Sweeps of fewer cases run in this process: starting workers would take
longer than the cases."""
TASKS_PER_WORKER = 16
"""Cases go out in about this many tasks per worker: cases differ in cost
many times over (a rack whose failure strands servers costs the reasons
of every host for each), so small tasks share the work out evenly; a
task costs the scheduler a few milliseconds, and a lost worker's retry
is short."""
CONNECT_TIMEOUT = 20.0
"""Seconds to reach a ``--scheduler`` address before giving up."""


class Unreachable(Exception):
    """The ``--scheduler`` address does not answer or has no worker, or
    workers are asked for without Dask installed."""


@dataclasses.dataclass(frozen=True)
class Options:
    """Where a simulation's sweeps run.

    :param workers: worker processes of a local cluster; None: one per
        core this process may use; 0: none, in this process.
    :param scheduler: the address of a running ``dask scheduler`` (its
        workers run the cases; ``workers`` is then ignored).
    :param engine: ``fast`` or ``nova``: what the workers simulate with.
    :param portable: the world can be rebuilt elsewhere (an embedded
        Placement); False keeps every case in this process.
    """

    workers: typing.Optional[int] = None
    scheduler: typing.Optional[str] = None
    engine: str = 'fast'
    portable: bool = True


def available() -> bool:
    """Whether Dask ``distributed`` is installed (the ``sweep`` extra)."""
    return importlib.util.find_spec('distributed') is not None


def check(options: Options) -> None:
    """Fail early: before a simulation runs its requests, the
    ``--scheduler`` answers and Dask is there when workers are asked for.

    :raises Unreachable: it does not.
    """
    if (options.scheduler is not None or options.workers) and \
            not available():
        raise Unreachable('workers need Dask: pip install '
                          '"nova-scoped-policies[sweep]" (or --workers 0)')
    if options.scheduler is not None:
        _apart(_reach, options)


def _reach(options: Options) -> None:
    with _client(options, 0):
        pass


def _green() -> bool:
    """Whether eventlet has patched this process's threads (nova's test
    harness does): Dask's event loops cannot run beside each other
    there, so its sweeps run in the process."""
    patcher = sys.modules.get('eventlet.patcher')
    return bool(patcher and patcher.is_monkey_patched('thread'))


def cores() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0))


def run(sim, index: int, cases: typing.Sequence[typing.Tuple[str, ...]]
        ) -> typing.List[resilience.Outcome]:
    """The outcome of each of ``cases``, in order, for the resilience
    request at ``index`` of ``sim``'s scenario.

    :raises Unreachable: the ``--scheduler`` address does not answer.
    """
    options = sim.sweep or Options(workers=0)
    request = sim.scenario.requests[index][1]
    sim.progress.phase('cases', len(cases))
    workers = cores() if options.workers is None else options.workers
    if not options.portable or _green() or options.scheduler is None and (
            len(cases) < IN_PROCESS_BELOW or workers == 0
            or options.workers is None and (
                workers == 1 or not available())):
        return _here(sim, index, cases)
    key = f'{uuid.uuid4()}:{index}:{options.engine}'
    if options.scheduler is None:
        # a local cluster's workers are forked from this process once its
        # world is what the sweep asks about: they start with it (copied
        # on write) instead of building it again
        worker.adopt(key, sim, request)
    try:
        return _apart(_dask, options, workers, key, None
                      if options.scheduler is None else sim.scenario,
                      index, cases, sim.progress)
    finally:
        worker.forget(key)


def _apart(fn, *args):
    """``fn(*args)`` in a thread of its own: Dask's synchronous client
    runs its event loop in the caller's thread, and refuses one that
    already runs a loop (a notebook's, a test harness's)."""
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(fn, *args).result()


def _dask(options: Options, workers: int, key: str, scenario, index: int,
          cases, progress) -> typing.List[resilience.Outcome]:
    with _client(options, workers) as client:
        return _on(client, key, scenario, index, options.engine, cases,
                   progress)


def _here(sim, index: int, cases) -> typing.List[resilience.Outcome]:
    """Every case in this process, on its own world (each told to the
    progress bar as it ends)."""
    world = worker.World.of('', sim, sim.scenario.requests[index][1])
    found = []
    for case in cases:
        found += world.run(index, [case])
        sim.progress.advance()
    return found


@contextlib.contextmanager
def _client(options: Options, workers: int):
    """A Dask client: of the ``--scheduler`` cluster, or of a local
    cluster of ``workers`` processes (one thread each: a worker holds one
    world) that stops with the ``with`` block."""
    import distributed
    if options.scheduler is not None:
        try:
            client = distributed.Client(options.scheduler,
                                        timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise Unreachable(f'--scheduler {options.scheduler}: no Dask '
                              f'scheduler answers ({exc})') from None
        with client:
            # a scheduler without workers would hold the tasks forever:
            # an error, never a sweep run here instead
            try:
                client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise Unreachable(
                    f'--scheduler {options.scheduler}: no Dask worker '
                    f'joined it within {CONNECT_TIMEOUT:g} s ({exc})'
                ) from None
            yield client
        return
    import dask
    # forked, the workers start with this process's world (see run)
    with dask.config.set({'distributed.worker.multiprocessing-method':
                          'fork'}), \
            distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True,
                # its dashboard on a port of its own: 8787 may be taken
                dashboard_address='127.0.0.1:0', memory_limit=0,
                silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def _on(client, key: str, scenario, index: int, engine: str,
        cases: typing.Sequence[typing.Tuple[str, ...]], progress
        ) -> typing.List[resilience.Outcome]:
    """The cases as tasks of ``client``'s workers (``key`` names the
    sweep's world; ``scenario``, None for workers that start with it),
    ``progress`` told of each task's cases as it ends.
    """
    import distributed
    workers = max(1, len(client.scheduler_info()['workers']))
    size = max(1, math.ceil(len(cases) / (workers * TASKS_PER_WORKER)))
    chunks = [list(cases[at:at + size]) for at in range(0, len(cases), size)]
    shipped = (scenario if scenario is None
               else client.scatter(scenario, broadcast=True))
    futures = client.map(worker.cases, [key] * len(chunks),
                         [shipped] * len(chunks), [index] * len(chunks),
                         [engine] * len(chunks), chunks, pure=False)
    found: typing.Dict[int, typing.List[resilience.Outcome]] = {}
    at = {future.key: n for n, future in enumerate(futures)}
    for future in distributed.as_completed(futures):
        found[at[future.key]] = future.result()
        progress.advance(len(found[at[future.key]]))
    return [outcome for n in range(len(chunks)) for outcome in found[n]]
