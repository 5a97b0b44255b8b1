"""What the benchmarks share: timing, the launcher that measures a
command's peak memory, and figures held to their targets.

A benchmark prints every figure under its key (:mod:`.figures`) with its
target (:class:`Targets`) and ends with :meth:`Targets.status`: non-zero,
with one ``MISSED`` line per figure, when any missed its target, so that
``tools/benchmark.sh`` fails loudly instead of printing a figure nobody
reads. A smoke run (``--smoke``) holds every yes-or-no figure (the same
decisions as nova, engines that agree, reports that are equal) and no
time target: a crash or a wrong answer fails it, a busy machine does not.
"""

import gc
import statistics
import subprocess
import sys
import time
import typing

from benchmarks import figures as figures_mod


def timed(fn, repeat, setup=None):
    """Median seconds of ``repeat`` calls of ``fn``, each with the
    cyclic garbage collector off (as :mod:`timeit` times).

    :param setup: when given, called before each call, outside the timer;
        ``fn`` is then called with what it returns (the input a call is
        handed, such as a new request).
    """
    samples = []
    enabled = gc.isenabled()
    try:
        for _ in range(repeat):
            args = (setup(),) if setup is not None else ()
            # as timeit does: a full collection of what the benchmark
            # built (100,000s of objects) would land in one sample or
            # another, whichever allocates at the wrong moment
            gc.disable()
            start = time.perf_counter()
            fn(*args)
            samples.append(time.perf_counter() - start)
            if enabled:
                gc.enable()
    finally:
        if enabled:
            gc.enable()
    return statistics.median(samples)


LAUNCHER = """
import resource, subprocess, sys, time
start = time.perf_counter()
status = subprocess.call(sys.argv[1:])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stderr.write(f'{seconds} {peak}')
sys.exit(status)
"""
"""Runs a command, then writes its seconds and peak memory (KiB): in a
small process of its own, as the peak memory Linux reports for a child
counts what its parent held when it forked it (the benchmark's process
holds worlds of its own)."""


def launched(argv: typing.Sequence[str], **kwargs):
    """``argv`` run by :data:`LAUNCHER`, start to exit.

    :param kwargs: for :func:`subprocess.run` (the output is captured,
        as bytes).
    :returns: its seconds, its own peak memory in MiB, and the finished
        process (its ``stdout``).
    :raises RuntimeError: it exited non-zero (with the end of its
        stderr).
    """
    proc = subprocess.run([sys.executable, '-c', LAUNCHER, *argv],
                          capture_output=True, check=False, **kwargs)
    if proc.returncode:
        err = proc.stderr[-2000:].decode('utf-8', 'replace')
        raise RuntimeError(f'{" ".join(argv[1:4])} exited '
                           f'{proc.returncode}: {err}')
    seconds, peak = map(float, proc.stderr.split()[-2:])
    return seconds, peak / 1024, proc


class Targets:
    """The figures of one run, each against its target.

    :param stream: where the lines go (stdout by default).
    :param suite: the suite whose figures these are: a key it does not
        declare (:mod:`.figures`) is a bug, raised as ``KeyError``
        (None: any name, for the tests of this class).
    :param run: ``full``, ``quick``, ``smoke`` or ``big``
        (:data:`.figures.RUNS`): :meth:`status` then also fails when a
        figure declared for that kind of run was not printed; None (a run
        whose sizes were changed): undeclared keys are printed as they
        are and no list is held.
    """

    def __init__(self, stream=None, suite: typing.Optional[str] = None,
                 run: typing.Optional[str] = None) -> None:
        self._stream = stream
        self.missed: typing.List[str] = []
        self.suite = suite
        self.run = run
        self.smoke = run == figures_mod.SMOKE
        self.printed: typing.Dict[str, float] = {}

    def _print(self, line: str) -> None:
        print(line, file=self._stream or sys.stdout, flush=True)

    def _declared(self, key: str, unit: typing.Optional[str]):
        """(the unit, what the figure is) of ``key``."""
        if key in self.printed:
            raise KeyError(f'{key} printed twice')
        figure = (figures_mod.FIGURES.get(key)
                  if self.suite is not None else None)
        if self.suite is not None and (
                figure is None or figure.suite != self.suite):
            if self.run is not None:
                raise KeyError(f'{key} is not a figure of the '
                               f'{self.suite} suite (benchmarks/'
                               'figures.py)')
            figure = None
        if figure is None:
            return unit or '', ''
        return figure.unit if unit is None else unit, f' -- {figure.what}'

    def figure(self, key: str, value: float,
               unit: typing.Optional[str] = None) -> float:
        """Print ``key: value`` (a figure with no target)."""
        unit, what = self._declared(key, unit)
        self.printed[key] = value
        shown = f'{value:.4g}' if isinstance(value, float) else f'{value}'
        self._print(f'{key}: {shown}{unit}{what}')
        return value

    def check(self, name: str, value: float, target: float,
              better: str = 'higher', unit: typing.Optional[str] = None,
              before: typing.Optional[float] = None) -> bool:
        """Print ``name: value (target ...)`` and remember a miss (not
        in a smoke run: its sizes are not those the targets are for, and
        its machine may be busy).

        :param better: ``higher`` (the target is a floor) or ``lower``
            (a ceiling).
        :param unit: printed after the value (default: the figure's).
        :param before: the figure before this change, if known: its ratio
            is printed too.
        :returns: whether the target is met.
        """
        unit, what = self._declared(name, unit)
        self.printed[name] = value
        if better == 'higher':
            met, bound, ratio = value >= target, '>=', value / target
        else:
            met = value <= target
            bound, ratio = '<=', target / value if value else float('inf')
        line = (f'{name}: {value:.3g}{unit} (target {bound} {target}{unit}, '
                f'ratio {ratio:.2f}')
        if before:
            versus = value / before if better == 'higher' else before / value
            line += f'; {versus:.2f}x the figure before, {before}{unit}'
        if self.smoke:
            line += '; not held in a smoke run'
            met = True
        line += ')' + ('' if met else '  MISSED') + what
        self._print(line)
        if not met:
            self.missed.append(f'{name}: {value:.3g}{unit}, target {bound} '
                               f'{target}{unit}')
        return met

    def require(self, name: str, ok: bool) -> bool:
        """A yes-or-no figure (decisions match...): a miss when false,
        in every run."""
        _, what = self._declared(name, '')
        self.printed[name] = float(ok)
        self._print(f'{name}: {bool(ok)}' + ('' if ok else '  MISSED')
                    + what)
        if not ok:
            self.missed.append(f'{name}: {bool(ok)}')
        return bool(ok)

    def status(self) -> int:
        """0 when every figure met its target (and, in a run of a declared
        kind, every figure declared for it was printed); else 1, after
        one ``MISSED`` line per figure that did not."""
        if self.suite is not None and self.run is not None:
            for key, figure in figures_mod.of(self.suite).items():
                if self.run in figure.runs and key not in self.printed:
                    self.missed.append(f'{key}: not printed (declared for '
                                       f'a {self.run} run)')
        for line in self.missed:
            self._print(f'MISSED {line}')
        if self.missed:
            self._print(f'FAILED: {len(self.missed)} figure(s) missed '
                        'their target')
            return 1
        return 0
