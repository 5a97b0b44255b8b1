"""P4: concurrent group boots, ours (lock + members in flight) vs nova's.

In nova's functional harness (real nova-api, conductor, scheduler, fake
computes, real Placement; casts stay casts), 4 racks x 3 hosts: fire G
groups x 4 boots back to back and wait until every server is ACTIVE or
ERROR, for

* nova: plain ``anti-affinity`` server groups (host scope, nova's filter and
  its compute-side late check);
* ours: ``anti-affinity:rack`` groups through our filters, serialised per
  group by a tooz lock in Redis on 127.0.0.1 and reading members in flight
  from Placement.

With one scheduler, then two (``test_concurrency.two_schedulers``: two
scheduler managers taking turns, each with its own memory of ours and its
own tooz coordinator; Placement answers 0.05 s late for both paths).
At least 100 boots a path (25 groups by default). Prints boots/s and the
wall time per boot of each, and ``conc_N_sched_ratio`` (ours / nova's
boots/s, 1.0 = as fast as nova) per number of schedulers N against its
target (>= 0.8);
exits 1 with a ``MISSED`` line when a ratio misses it.

Every figure is printed under its key (:mod:`benchmarks.figures`). Run
with ``tools/benchmark.sh concurrency [--groups G] [--schedulers N]``
(``--smoke``: one group a path, one scheduler, no time target).
"""

import argparse
import sys
import time
import unittest
import warnings

warnings.simplefilter('ignore')

from oslo_serialization import jsonutils  # noqa: E402

from benchmarks.common import Targets  # noqa: E402
from benchmarks import figures  # noqa: E402
from tests.functional import test_concurrency  # noqa: E402

RESULTS = {}


class _Bench(test_concurrency.ConcurrentBootsTest):
    GROUPS = 25
    SCHEDULERS = 1
    LATENCY = 0.05
    test_anti_affinity_rack = test_max_server_per_rack = None
    test_affinity_rack = test_llmn = None

    def _fire_all(self, policy, document):
        ids = []
        for _ in range(self.GROUPS):
            group = self._group(policy)
            for i in range(4):
                server = self._build_server(name=f'b{i}', networks='none',
                                            image_uuid=test_concurrency.
                                            base.IMAGE)
                hints = {'group': group['id']}
                if document:
                    hints['scoped_policies'] = jsonutils.dumps(document)
                ids.append(self.api.post_server(
                    {'server': server, 'os:scheduler_hints': hints})['id'])
        return ids

    def _measure(self, name, policy, document):
        started = time.monotonic()
        servers = self._settle(self._fire_all(policy, document))
        took = time.monotonic() - started
        active = sum(s['status'] == 'ACTIVE' for s in servers)
        RESULTS[name] = (len(servers), took, active)
        for server in servers:
            self.api.delete_server(server['id'])
        for server in servers:
            self._wait_until_deleted(server)

    def setUp(self):
        super().setUp()
        if self.SCHEDULERS == 2:
            test_concurrency.two_schedulers(self, self.LATENCY)

    def test_bench(self):
        # warm-up boot, not measured
        self._boot(None, name='warm-up')
        self._measure('nova anti-affinity (host)', 'anti-affinity', None)
        self._measure('ours anti-affinity:rack + lock', 'soft-anti-affinity',
                      {'policies': ['anti-affinity:rack']})


def main(argv):
    parser = argparse.ArgumentParser(prog='bench_concurrency')
    parser.add_argument('--groups', type=int, default=None,
                        help='groups of 4 boots a path (default 25: 100)')
    parser.add_argument('--schedulers', type=int, nargs='+', default=None,
                        choices=(1, 2))
    parser.add_argument('--smoke', action='store_true',
                        help='one group a path, one scheduler, no time '
                        'target')
    args = parser.parse_args(argv)
    changed = args.groups is not None or args.schedulers is not None
    _Bench.GROUPS = args.groups or (1 if args.smoke else 25)
    schedulers_run = args.schedulers or ([1] if args.smoke else [1, 2])
    targets = Targets(suite='concurrency', run=None if changed else (
        figures.SMOKE if args.smoke else figures.FULL))
    targets.figure('conc_boots_per_path', _Bench.GROUPS * 4)
    for schedulers in schedulers_run:
        _Bench.SCHEDULERS = schedulers
        RESULTS.clear()
        result = unittest.TextTestRunner(
            stream=sys.stderr, verbosity=0).run(
            unittest.defaultTestLoader.loadTestsFromTestCase(_Bench))
        at = f'conc_{schedulers}_sched'
        if not targets.require(f'{at}_ran', result.wasSuccessful()
                               and len(RESULTS) == 2):
            continue
        rates = {}
        for (name, (boots, took, active)), path in zip(RESULTS.items(),
                                                       ('nova', 'ours')):
            rates[path] = boots / took
            print(f'{schedulers} scheduler(s), {name:32s} {boots} boots in '
                  f'{took:6.2f} s, {took / boots * 1000:6.0f} ms per boot')
            targets.figure(f'{at}_{path}_boots_per_s', rates[path])
            targets.figure(f'{at}_{path}_active', active)
        nova, ours = rates['nova'], rates['ours']
        targets.figure(f'{at}_added_ms_per_boot',
                       (1 / ours - 1 / nova) * 1000)
        targets.check(f'{at}_ratio', ours / nova, 0.8)
    return targets.status()


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
