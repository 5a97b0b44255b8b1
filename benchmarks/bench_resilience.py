"""P7: resilience sweeps on the cloud world, as a user waits.

The varied 5,000-host world of P3 (:func:`benchmarks.worlds.cloud`: six
host sizes, traits, 4,000 servers running before 50 groups of every
policy kind receive theirs, 125 racks scattered in five zones), then
``nova-scoped-policies resilience`` as a whole process, start to exit:

1. N-1 over the 125 racks in the process (``--workers 0``: the
   reference), then with the default workers (one per core this process
   may use): target <= 60 s on the 2-core machine.
2. The same with ``--workers 1`` and ``--workers 2``: the sweep's own
   time (the report's ``seconds``: the workers started, every case) must
   be >= 1.6x shorter with 2 than with 1; the ratio of the whole process
   is printed beside it (its start, the world and the requests before the
   sweep take the same time whatever the workers).
3. N-2 over the five zones (10 cases, each failing two-fifths of the
   cloud) in the process (its reference), then with 1 and 2 workers: the
   ratios are printed.

Every report, racks and zones, must be its sweep's ``--workers 0`` report
but for its timings (``res_5k_n1_racks_reports_equal``,
``res_5k_n2_zones_reports_equal``). Every figure is printed under its key
(:mod:`benchmarks.figures`). Run with ``tools/benchmark.sh resilience``
(``--quick``: N-1 only, in the process, with the default workers and
with 2, without the 1-worker run; ``--smoke``: the same world at 360
hosts, N-1 and N-2 in the process and on 2 workers, the reports compared,
no time target).
"""

import argparse
import os
import sys
import warnings

warnings.simplefilter('ignore')

from benchmarks.bench_simulator import command  # noqa: E402
from benchmarks.common import Targets  # noqa: E402
from benchmarks import figures  # noqa: E402
from benchmarks import worlds  # noqa: E402

HOSTS = 5000
SMOKE_HOSTS = 360
"""The smallest cloud world with five zones and more racks than a sweep
runs in the process (9 racks; N-2 over zones: 10 cases)."""


def _timeless(result):
    result['stats'].pop('seconds')
    result['stats'].pop('process_seconds', None)
    for entry in result['resilience']:
        entry.pop('seconds')
    return result


def sweep(data, fail, count, workers):
    """The command's seconds, its sweep's own seconds (the report's:
    the workers started, every case, the report made) and its timeless
    report."""
    args = ['resilience', '--fail', fail, '--count', str(count)]
    if workers is not None:
        args += ['--workers', str(workers)]
    seconds, _, result = command(data, args)
    swept = result['resilience'][-1]['seconds']
    return seconds, swept, _timeless(result)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='bench_resilience')
    parser.add_argument('--quick', action='store_true',
                        help='N-1 only, without the 1-worker run')
    parser.add_argument('--smoke', action='store_true',
                        help=f'{SMOKE_HOSTS:,} hosts, in the process and '
                        'on 2 workers, no time target')
    args = parser.parse_args(argv)
    run = (figures.SMOKE if args.smoke else
           figures.QUICK if args.quick else figures.FULL)
    targets = Targets(suite='resilience', run=run)
    hosts = SMOKE_HOSTS if args.smoke else HOSTS
    at = f'res_{figures.size(hosts)}'
    data = worlds.cloud(hosts)
    cores = len(os.sched_getaffinity(0))
    print(f'cloud world, {hosts} hosts, {cores} cores', flush=True)
    sweeps = [('n1_racks', 'rack', 1)]
    if not args.quick:
        sweeps.append(('n2_zones', 'zone', 2))
    for name, fail, count in sweeps:
        key = f'{at}_{name}'
        seconds, alone, reference = sweep(data, fail, count, 0)
        targets.figure(f'{key}_inproc_s', seconds)
        targets.figure(f'{key}_inproc_sweep_s', alone)
        if count == 1:
            (found,) = reference['resilience']
            targets.figure(f'{key}_cases', found['cases'])
            targets.figure(f'{key}_survived', found['survived'])
            targets.figure(f'{key}_groups_at_risk', len(found['groups']))
        same = True
        if count == 1 and not args.smoke:
            seconds, _, result = sweep(data, fail, count, None)
            targets.check(f'{key}_default_s', seconds, 60, better='lower')
            same = result == reference
        timed, swept = {}, {}
        for workers in (2,) if args.quick or args.smoke else (1, 2):
            timed[workers], swept[workers], result = sweep(
                data, fail, count, workers)
            same = same and result == reference
            targets.figure(f'{key}_{workers}w_s', timed[workers])
            targets.figure(f'{key}_{workers}w_sweep_s', swept[workers])
        targets.require(f'{key}_reports_equal', same)
        if 1 not in timed:
            continue
        targets.figure(f'{key}_wait_speedup', timed[1] / timed[2])
        if count == 1:
            # the process's own start, the world and its 943 requests
            # come before any case whatever the workers: the sweep's own
            # time is what workers can divide
            targets.check(f'{key}_sweep_speedup', swept[1] / swept[2], 1.6)
        else:
            targets.figure(f'{key}_sweep_speedup', swept[1] / swept[2])
    return targets.status()


if __name__ == '__main__':
    sys.exit(main())
