"""P3: the simulator at cloud scale, and fake vs real Placement.

1. Placements per second at 5,000 hosts in 125 racks: 20 groups with
   ``anti-affinity:rack`` (max 2 per rack), each booting 20 members in
   multi-instance requests of 5, on the embedded fake Placement, with the
   scoped policy query filter on. ``--engine fast`` (median of three runs;
   target >= 500/s), then the nova engine, which runs every host through
   nova's handlers and Placement over HTTP, on the same scenario: both must
   decide alike.
2. The same scenario at 200 hosts on the fake and on the real Placement
   (openstack-placement on SQLite, in-process): decisions must match.

Run with ``tools/benchmark.sh simulator`` (``--quick``: skip the nova
engine at 5,000 hosts, which takes about a minute).
"""

import argparse
import gc
import sys
import time
import warnings

warnings.simplefilter('ignore')

from nova_scoped_policies.placement import fake  # noqa: E402
from nova_scoped_policies.simulator import fast  # noqa: E402
from nova_scoped_policies.simulator import runner  # noqa: E402
from nova_scoped_policies.simulator import scenario as sc  # noqa: E402

FLAVOR = {'resources': {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}}


def scenario(hosts, racks, groups=20, members=20, batch=5):
    return sc.parse({
        'scopes': {'rack': {}},
        'generate': {'hosts': {'count': hosts, 'prefix': 'n', 'resources': {
            'VCPU': 64, 'MEMORY_MB': 262144, 'DISK_GB': 4000}},
            'scopes': {'rack': racks}},
        'config': {'enable_scoped_policy_query_filter': True},
        'groups': [{'name': f'g{g}', 'policies': ['anti-affinity:rack'],
                    'rules': {'max_server_per_rack': 2}}
                   for g in range(groups)],
        'requests': [{'boot': {'name': f'g{g}-b{b}', 'group': f'g{g}',
                               'count': batch, 'flavor': FLAVOR}}
                     for b in range(members // batch)
                     for g in range(groups)],
    })


def run(scn, placement_fixture):
    """The nova engine: placements, failures and seconds of the boots."""
    from tests import placement_fixtures as pf
    fixture = placement_fixture()
    fixture.setUp()
    try:
        sim = runner.Simulation(scn, pf.client_for(fixture))
        return _boots(sim, scn)
    finally:
        fixture.cleanUp()


def run_fast(scn):
    return _boots(fast.FastSimulation(scn, fake.FakePlacement()), scn)


def _boots(sim, scn):
    """Build the world (not timed), then time the boots."""
    sim.build()
    with sim.scheduler():
        # what a long-running scheduler has done long ago: the hosts no
        # longer weigh on the garbage collector's full passes
        gc.collect()
        gc.freeze()
        try:
            start = time.perf_counter()
            for _, request in scn.requests:
                sim.boot(request)
            seconds = time.perf_counter() - start
        finally:
            gc.unfreeze()
    return sim, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=5000)
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--quick', action='store_true',
                        help='skip the nova engine at --hosts')
    args = parser.parse_args(argv)
    from tests import placement_fixtures as pf

    big = scenario(args.hosts, args.hosts // 40)
    runs = [run_fast(big) for _ in range(args.repeat)]
    sim, seconds = sorted(runs, key=lambda r: r[1])[len(runs) // 2]
    placed = len(sim.placements)
    rate = placed / seconds
    print(f'{args.hosts} hosts, {len(big.requests)} boots of 5, engine '
          f'fast: {placed} placed, {len(sim.failures)} failed, '
          f'{seconds:.2f} s (median of {args.repeat})')
    print(f'placements_per_second_{args.hosts}_hosts: {rate:.0f} '
          f'(target >= 500, ratio {rate / 500:.2f})')
    same = True
    if not args.quick:
        nova, nova_s = run(big, pf.FakePlacementFixture)
        same = (nova.placements == sim.placements
                and nova.failures == sim.failures)
        nova_rate = len(nova.placements) / nova_s
        print(f'engine nova: {len(nova.placements)} placed, {nova_s:.2f} s, '
              f'{nova_rate:.0f} placements/s; fast/nova '
              f'{rate / nova_rate:.0f}x')
        print(f'fast_vs_nova_engine_decisions_match: {same}')

    small = scenario(200, 5, groups=10, members=10)
    fake_sim, fake_s = run(small, pf.FakePlacementFixture)
    real, real_s = run(small, pf.real_placement)
    match = (fake_sim.placements == real.placements
             and fake_sim.failures == real.failures)
    print(f'200 hosts: fake Placement {fake_s:.2f} s, real Placement '
          f'{real_s:.2f} s, {len(fake_sim.placements)} placements')
    print(f'fake_vs_real_decisions_match: {match}')
    return 0 if same and match else 1


if __name__ == '__main__':
    sys.exit(main())
