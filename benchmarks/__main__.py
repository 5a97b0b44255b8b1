"""``python -m benchmarks [all|filters|request_filters|simulator|
concurrency|stacks|repair|resilience|export] [args]``.

``all`` (the default) runs every suite in turn (P1 to P8) and prints each
figure with its ratio; ``--quick`` there shortens P1, P3, P5, P6, P7 and
P8.
"""

import importlib
import sys

SUITES = ('filters', 'request_filters', 'simulator', 'concurrency',
          'stacks', 'repair', 'resilience', 'export')
# the suites that take --quick
QUICK = ('filters', 'simulator', 'stacks', 'repair', 'resilience',
         'export')


def _main(name):
    """The suite's ``main``, imported only when it runs: the concurrency
    suite loads nova's functional test harness, which monkey-patches the
    process with eventlet and would slow every suite after it (the
    simulator's figures are what a user of ``simulate`` waits, in a
    process without it)."""
    return importlib.import_module(f'benchmarks.bench_{name}').main


def run_all(argv):
    quick = '--quick' in argv
    status = 0
    for name in SUITES:
        print(f'== {name} ==', flush=True)
        status |= _main(name)(['--quick'] if quick and name in QUICK
                              else [])
    return status


if __name__ == '__main__':
    args = sys.argv[1:]
    name = args.pop(0) if args and args[0] in (*SUITES, 'all') else 'all'
    sys.exit(run_all(args) if name == 'all' else _main(name)(args))
