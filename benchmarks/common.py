"""What the benchmarks share: timing, and figures held to their targets.

A benchmark prints every figure with its target (:class:`Targets`) and
ends with :meth:`Targets.status`: non-zero, with one ``MISSED`` line per
figure, when any missed its target, so that ``tools/benchmark.sh`` fails
loudly instead of printing a figure nobody reads.
"""

import gc
import statistics
import sys
import time
import typing


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


class Targets:
    """The figures of one run, each against its target.

    :param stream: where the lines go (stdout by default).
    """

    def __init__(self, stream=None) -> None:
        self._stream = stream
        self.missed: typing.List[str] = []

    def _print(self, line: str) -> None:
        print(line, file=self._stream or sys.stdout, flush=True)

    def check(self, name: str, value: float, target: float,
              better: str = 'higher', unit: str = '',
              before: typing.Optional[float] = None) -> bool:
        """Print ``name: value (target ...)`` and remember a miss.

        :param better: ``higher`` (the target is a floor) or ``lower``
            (a ceiling).
        :param before: the figure before this change, if known: its ratio
            is printed too.
        :returns: whether the target is met.
        """
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
        line += ')' + ('' if met else '  MISSED')
        self._print(line)
        if not met:
            self.missed.append(f'{name}: {value:.3g}{unit}, target {bound} '
                               f'{target}{unit}')
        return met

    def require(self, name: str, ok: bool) -> bool:
        """A yes-or-no figure (decisions match...): a miss when false."""
        self._print(f'{name}: {ok}' + ('' if ok else '  MISSED'))
        if not ok:
            self.missed.append(f'{name}: {ok}')
        return ok

    def status(self) -> int:
        """0 when every figure met its target; else 1, after one
        ``MISSED`` line per figure that did not."""
        for line in self.missed:
            self._print(f'MISSED {line}')
        if self.missed:
            self._print(f'FAILED: {len(self.missed)} figure(s) missed '
                        'their target')
            return 1
        return 0
