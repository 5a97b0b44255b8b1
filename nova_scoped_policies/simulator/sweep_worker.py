"""The worker side of a resilience sweep (:mod:`.sweep`): a Dask task
runs :func:`cases` in a worker process, which keeps one world built for
the sweep's tasks.

Imported by a worker when it unpickles its first task: eventlet's
deprecation warning (nova's libraries import it) is silenced before
anything imports nova, or each worker would print it.
"""

import contextlib
import dataclasses
import os
import threading
import typing

# first: silences eventlet's warning before anything imports nova
from nova_scoped_policies import cmd  # noqa: F401
from nova_scoped_policies.simulator import resilience

CRASH_ONCE = 'NSP_SWEEP_CRASH_ONCE'
"""Fault injection for the tests: when this environment variable names a
file that does not exist, the first worker task to see it creates it and
kills its own worker process (as an OOM killer would)."""
_LOCK = threading.Lock()
"""One world, one case at a time, whatever the worker's threads."""


@dataclasses.dataclass
class World:
    """The world a worker process keeps for a sweep's tasks.

    :param key: the sweep's.
    :param sim: the simulation, as the requests before the sweep left it.
    :param domains: the failing scope's domains -> their hosts.
    :param baseline: what the world is before any case.
    :param stack: what holds it open (None: adopted: the process the
        worker was forked from made it and keeps it).
    """

    key: str
    sim: typing.Any
    domains: typing.Mapping[str, typing.FrozenSet[str]]
    baseline: resilience.Baseline
    stack: typing.Optional[contextlib.ExitStack] = None

    @classmethod
    def of(cls, key: str, sim, request,
           stack: typing.Optional[contextlib.ExitStack] = None) -> 'World':
        """``sim``'s world for the sweep of ``request``: the failing
        scope's domains and the baseline read from it now."""
        return cls(key, sim, resilience.domains(
            sim.scenario, sim.aggregates.topology, request.fail),
            resilience.Baseline(sim, request.count == 1), stack)

    def run(self, index: int, chunk) -> typing.List[resilience.Outcome]:
        """The cases of ``chunk`` of the resilience request at
        ``index``."""
        return resilience.run_cases(
            self.sim, self.sim.scenario.requests[index][1], chunk,
            self.domains, self.baseline)


_WORLD: typing.Optional[World] = None
"""The world this worker process keeps."""


def cases(key: str, scenario, index: int, engine: str,
          chunk: typing.List[typing.Tuple[str, ...]]
          ) -> typing.List[resilience.Outcome]:
    """A task: the cases of ``chunk`` of the resilience request at
    ``index``, on this worker's world (built from ``scenario`` when it is
    not the sweep's, named by ``key``; None: the worker started with
    it)."""
    with _LOCK:
        _crash_once()
        return _world(key, scenario, index, engine).run(index, chunk)


def adopt(key: str, sim, request) -> None:
    """This process's own world is the sweep's ``key``: worker processes
    forked from it now run their cases on it (each worker's copy; the
    cases put it back after each).

    :param request: the sweep's resilience request.
    """
    global _WORLD
    forget(None)
    _WORLD = World.of(key, sim, request)


def forget(key: typing.Optional[str]) -> None:
    """Let go of the world (of ``key``, or whichever): one that a worker
    built is closed; one adopted is the caller's, left as it is."""
    global _WORLD
    if _WORLD is not None and key in (None, _WORLD.key):
        world, _WORLD = _WORLD, None
        if world.stack is not None:
            world.stack.close()


def _world(key: str, scenario, index: int, engine: str) -> World:
    global _WORLD
    if _WORLD is not None and _WORLD.key == key:
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
        _WORLD = World.of(key, sim, scenario.requests[index][1], stack)
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
