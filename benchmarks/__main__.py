"""``python -m benchmarks [all|filters|request_filters|simulator|
concurrency|stacks] [args]``.

``all`` (the default) runs P1, P2 and P3 in turn and prints each figure with
its ratio; ``--quick`` there shortens P1 and P3.
"""

import sys

from benchmarks import bench_concurrency
from benchmarks import bench_filters
from benchmarks import bench_request_filters
from benchmarks import bench_simulator
from benchmarks import bench_stacks

SUITES = {'filters': bench_filters.main,
          'request_filters': bench_request_filters.main,
          'simulator': bench_simulator.main,
          'concurrency': bench_concurrency.main,
          'stacks': bench_stacks.main}
QUICK = ('filters', 'simulator', 'stacks')   # the suites that take --quick


def run_all(argv):
    quick = '--quick' in argv
    status = 0
    for name, suite in SUITES.items():
        print(f'== {name} ==', flush=True)
        status |= suite(['--quick'] if quick and name in QUICK else [])
    return status


if __name__ == '__main__':
    args = sys.argv[1:]
    name = args.pop(0) if args and args[0] in (*SUITES, 'all') else 'all'
    sys.exit(run_all(args) if name == 'all' else SUITES[name](args))
