"""``python -m benchmarks [all|filters|request_filters|simulator|
concurrency|stacks|repair|resilience|export|figures] [args]``.

``all`` (the default) runs every suite in turn (P1 to P8), each in a
process of its own, and prints each figure under its key with its ratio
to its target, then each suite's status and seconds; it exits 1 when any
suite failed. ``--quick`` there shortens P1, P3, P5, P6, P7 and P8;
``--smoke`` runs every suite at its smallest size with every correctness
check (the same verdicts as nova, engines that agree, equal reports...)
and no time target: a crash or a wrong answer fails it, a busy machine
does not (CI runs it: ``tools/run-tests.sh``).

``figures [SUITE]`` lists the figures the suites print (their keys, what
each is, and the runs that print it: :mod:`benchmarks.figures`).
"""

import importlib
import subprocess
import sys
import time

from benchmarks import figures

SUITES = figures.SUITES
# the suites that take --quick
QUICK = ('filters', 'simulator', 'stacks', 'repair', 'resilience',
         'export')


def _main(name):
    """The suite's ``main``, imported only when it runs: the concurrency
    suite loads nova's functional test harness, which monkey-patches the
    process with eventlet."""
    return importlib.import_module(f'benchmarks.bench_{name}').main


def run_all(argv):
    """Every suite in a process of its own (the concurrency suite's
    eventlet patches only its own; a suite that crashes does not stop the
    others): 0 when every suite passed."""
    smoke = '--smoke' in argv
    quick = '--quick' in argv
    status = 0
    summary = []
    started = time.perf_counter()
    for name in SUITES:
        print(f'== {name} ==', flush=True)
        args = (['--smoke'] if smoke else
                ['--quick'] if quick and name in QUICK else [])
        begun = time.perf_counter()
        code = subprocess.call([sys.executable, '-m', 'benchmarks', name,
                                *args])
        summary.append((name, code, time.perf_counter() - begun))
        status |= code != 0
    print('== summary ==')
    for name, code, seconds in summary:
        print(f'{name}: {"ok" if code == 0 else f"FAILED ({code})"}, '
              f'{seconds:.0f} s')
    print(f'all{" --smoke" if smoke else ""}: '
          f'{time.perf_counter() - started:.0f} s', flush=True)
    return status


def list_figures(argv):
    """Each figure: its key, its runs, its unit and what it is."""
    for key, figure in figures.FIGURES.items():
        if argv and figure.suite not in argv:
            continue
        runs = ','.join(r for r in figures.RUNS if r in figure.runs)
        print(f'{key} [{runs}]{figure.unit and f" ({figure.unit.strip()})"}'
              f': {figure.what}')
    return 0


if __name__ == '__main__':
    args = sys.argv[1:]
    name = (args.pop(0) if args and args[0] in (*SUITES, 'all', 'figures')
            else 'all')
    if name == 'all':
        sys.exit(run_all(args))
    sys.exit(list_figures(args) if name == 'figures'
             else _main(name)(args))
