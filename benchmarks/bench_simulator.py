"""P3: the simulator at cloud scale, and fake vs real Placement.

1. Placements per second at 5,000 hosts in 125 racks: 20 groups with
   ``anti-affinity:rack`` (max 2 per rack), each booting 20 members in
   multi-instance requests of 5, on the embedded fake Placement, with the
   scoped policy query filter on (target >= 500/s).
2. The same scenario at 200 hosts on the fake and on the real Placement
   (openstack-placement on SQLite, in-process): decisions must match.

Run with ``tools/benchmark.sh simulator``.
"""

import argparse
import sys
import time
import warnings

warnings.simplefilter('ignore')

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
    from tests import placement_fixtures as pf
    fixture = placement_fixture()
    fixture.setUp()
    try:
        sim = runner.Simulation(scn, pf.client_for(fixture))
        sim.build()
        start = time.perf_counter()
        with sim.scheduler():
            for _, request in scn.requests:
                sim.boot(request)
        seconds = time.perf_counter() - start
        return sim, seconds
    finally:
        fixture.cleanUp()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=5000)
    args = parser.parse_args(argv)
    from tests import placement_fixtures as pf

    big = scenario(args.hosts, args.hosts // 40)
    sim, seconds = run(big, pf.FakePlacementFixture)
    placed = len(sim.placements)
    print(f'{args.hosts} hosts, {len(big.requests)} boots of 5: {placed} '
          f'placed, {len(sim.failures)} failed, {seconds:.2f} s')
    print(f'placements_per_second_{args.hosts}_hosts: '
          f'{placed / seconds:.0f} (target >= 500)')

    small = scenario(200, 5, groups=10, members=10)
    fake, fake_s = run(small, pf.FakePlacementFixture)
    real, real_s = run(small, pf.real_placement)
    same = (fake.placements == real.placements
            and fake.failures == real.failures)
    print(f'200 hosts: fake Placement {fake_s:.2f} s, real Placement '
          f'{real_s:.2f} s, {len(fake.placements)} placements')
    print(f'fake_vs_real_decisions_match: {same}')
    return 0 if same else 1


if __name__ == '__main__':
    sys.exit(main())
