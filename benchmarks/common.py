"""What the benchmarks share."""

import statistics
import time


def timed(fn, repeat):
    """Median seconds of ``repeat`` calls of ``fn``."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)
