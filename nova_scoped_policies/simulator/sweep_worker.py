"""The worker side of a resilience sweep (:mod:`.sweep`): a Dask task
runs :func:`cases` in a worker process, which keeps one world built for
the sweep's tasks.

Imported by a worker when it unpickles its first task: eventlet's
deprecation warning (nova's libraries import it) is silenced before
anything imports nova, or each worker would print it.
"""

import contextlib
import os
import threading
import typing
import warnings

warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')

from nova_scoped_policies.simulator import resilience  # noqa: E402

CRASH_ONCE = 'NSP_SWEEP_CRASH_ONCE'
"""Fault injection for the tests: when this environment variable names a
file that does not exist, the first worker task to see it creates it and
kills its own worker process (as an OOM killer would)."""
_LOCK = threading.Lock()
"""One world, one case at a time, whatever the worker's threads."""
_WORLD: typing.Dict[str, typing.Any] = {}
"""The world this worker process keeps: its key, the exit stack that
holds it open (None: adopted, the process it was forked from made it),
the simulation, the domains and the baseline."""


def cases(key: str, scenario, index: int, engine: str,
          chunk: typing.List[typing.Tuple[str, ...]]
          ) -> typing.List[resilience.Outcome]:
    """A task: the cases of ``chunk`` of the resilience request at
    ``index``, on this worker's world (built from ``scenario`` when it is
    not the sweep's, named by ``key``; None: the worker started with
    it)."""
    with _LOCK:
        _crash_once()
        world = _world(key, scenario, index, engine)
        sim = world['sim']
        return resilience.run_cases(sim, sim.scenario.requests[index][1],
                                    chunk, world['domains'],
                                    world['baseline'])


def adopt(key: str, sim, domains, baseline) -> None:
    """This process's own world is the sweep's ``key``: worker processes
    forked from it now run their cases on it (each worker's copy; the
    cases put it back after each)."""
    forget(None)
    _WORLD.update(key=key, stack=None, sim=sim, domains=domains,
                  baseline=baseline)


def forget(key: typing.Optional[str]) -> None:
    """Let go of the world (of ``key``, or whichever): one that a worker
    built is closed; one adopted is the caller's, left as it is."""
    if _WORLD and (key is None or _WORLD['key'] == key):
        stack = _WORLD['stack']
        _WORLD.clear()
        if stack is not None:
            stack.close()


def _world(key: str, scenario, index: int, engine: str) -> dict:
    if _WORLD.get('key') == key:
        return _WORLD
    forget(None)
    if scenario is None:
        raise RuntimeError(f'sweep {key}: this worker has not its world '
                           '(a local worker is forked with it)')
    from nova_scoped_policies.simulator import engines
    stack = contextlib.ExitStack()
    try:
        sim = stack.enter_context(engines.simulation(scenario, engine))
        stack.enter_context(sim.before(index))
        request = scenario.requests[index][1]
        _WORLD.update(
            key=key, stack=stack, sim=sim,
            domains=resilience.domains(scenario, sim.aggregates.topology,
                                       request.fail),
            baseline=resilience.Baseline(sim, request.count == 1))
    except BaseException:
        stack.close()
        raise
    return _WORLD


def _crash_once() -> None:
    marker = os.environ.get(CRASH_ONCE)
    if marker and not os.path.exists(marker):
        with open(marker, 'w', encoding='utf-8') as handle:
            handle.write(str(os.getpid()))
        os._exit(1)
