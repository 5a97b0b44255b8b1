"""P6: repair plans (issue #24).

1,000 server groups of 5 (``anti-affinity:rack``; every tenth
``affinity:rack`` instead) at 5,000 hosts in 125 racks of 40, hosts of two
sizes partly used; 5% of the groups violate their policy (two members of a
spread share a rack, or one member of an affinity group sits in another
rack). The planner (:func:`nova_scoped_policies.repair.planner.plan`) is
printed against the greedy baseline (one violating server at a time, to
the first host the filters pass): moves used and seconds as a user waits
for the plan. Targets: under 10 s, never more moves than greedy, every
violation repaired.

Every figure is printed under its key (:mod:`benchmarks.figures`). Run
with ``tools/benchmark.sh repair`` (``--quick``: 1,000 hosts, 200 groups;
``--smoke``: the same, the plan held to its checks, no time target).
"""

import argparse
import random
import sys
import time

from benchmarks.common import Targets
from benchmarks import figures
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.repair import planner
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope

SIZES = ({'VCPU': 64, 'MEMORY_MB': 262144},
         {'VCPU': 32, 'MEMORY_MB': 131072})
FLAVOR = {'VCPU': 2, 'MEMORY_MB': 4096}
SPREAD = parse_document({'policies': ['anti-affinity:rack']})
TOGETHER = parse_document({'policies': ['affinity:rack']})


def world(rng, racks, per_rack, groups, broken):
    """(problem, racks' hosts): ``groups`` groups of 5, ``broken`` of
    them violating."""
    names = [[f'r{r}h{i}' for i in range(per_rack)] for r in range(racks)]
    domains = [Domain(f'rack-{r}', f'rack-{r}', 'rack', frozenset(hs))
               for r, hs in enumerate(names)]
    used = {h: {rc: 0 for rc in FLAVOR} for hs in names for h in hs}
    servers, targets = {}, []
    bad = set(rng.sample(range(groups), broken))
    for g in range(groups):
        together = g % 10 == 0
        racks_of = ([rng.randrange(racks)] * 5 if together
                    else rng.sample(range(racks), 5))
        if g in bad:
            if together:
                racks_of[4] = (racks_of[0] + 1) % racks
            else:
                racks_of[4] = racks_of[0]
        members = []
        hosts = rng.sample(names[racks_of[0]], 5) if together else None
        for i, r in enumerate(racks_of):
            host = hosts[i] if together and r == racks_of[0] else \
                rng.choice(names[r])
            sid = f'g{g}-{i}'
            servers[sid] = planner.Server(sid, host, dict(FLAVOR))
            for rc, n in FLAVOR.items():
                used[host][rc] += n
            members.append(sid)
        targets.append(planner.Target.group(
            f'g{g}', TOGETHER if together else SPREAD, members))
    hosts = []
    for hs in names:
        for h in hs:
            size = rng.choice(SIZES)
            usage = rng.choice((0.0, 0.25, 0.5))
            hosts.append(planner.Host(h, {
                rc: int(n * (1 - usage)) - used[h][rc]
                for rc, n in size.items()}))
    return planner.Problem(tuple(hosts), servers, tuple(targets),
                           Topology([Scope('rack')], domains))


def main(argv=()):
    parser = argparse.ArgumentParser(prog='benchmarks repair')
    parser.add_argument('--quick', action='store_true')
    parser.add_argument('--smoke', action='store_true',
                        help='as --quick, with no time target')
    args = parser.parse_args(list(argv))
    small = args.quick or args.smoke
    hosts, groups = (1000, 200) if small else (5000, 1000)
    targets = Targets(suite='repair', run=(
        figures.SMOKE if args.smoke else
        figures.QUICK if args.quick else figures.FULL))
    racks = hosts // 40
    rng = random.Random(24)
    started = time.perf_counter()
    problem = world(rng, racks, 40, groups, groups // 20)
    built = time.perf_counter() - started
    found = planner.plan(problem)
    baseline = planner.greedy(problem)
    print(f'{hosts} hosts, {groups} groups of 5, {groups // 20} violating '
          f'(world built in {built:.1f} s); planner: {found.status} '
          f'({sum(m.temporary for m in found.moves)} temporary moves), '
          f'greedy: {baseline.status}')
    at = f'repair_{figures.size(hosts)}'
    targets.figure(f'{at}_violations', len(found.before))
    targets.figure(f'{at}_planner_moves', len(found.moves))
    targets.figure(f'{at}_greedy_moves', len(baseline.moves))
    targets.check(f'{at}_planner_s', found.seconds, 10, better='lower')
    targets.figure(f'{at}_greedy_s', baseline.seconds)
    if found.status != planner.REPAIRED:
        print(f'  not repaired: {found.reason}')
    targets.require(f'{at}_repaired', found.status == planner.REPAIRED)
    targets.require(f'{at}_no_more_moves_than_greedy',
                    baseline.status != planner.REPAIRED
                    or len(found.moves) <= len(baseline.moves))
    return targets.status()


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
