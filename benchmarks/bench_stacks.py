"""P5: joint decisions for stacks (issue #14).

1. **Joint vs one at a time** on 200 random stacks that fit (a stack fits
   when the solver with one variable per host and a long time limit finds a
   decision, independently of the class merging under test) in random
   datacenters (4-8 racks of 4-8 hosts, hosts partly used). One at a time
   is nova's way: servers in document order, each on the passing host with
   the most free RAM (nova's RAMWeigher spreads), checked by our engine
   against the servers placed before it. Printed: the share of fitting
   stacks each places; target: the joint decision places 100%.
2. **Decision time** as a user waits, from the call to the answer
   (``decide``: the one-at-a-time start, classes, model, solve, replay)
   with the service's default time limit (``[scoped_policies_api]
   stack_time_limit``, 10 s) and every core, on a **varied world**
   (:func:`varied`: six host sizes, a third of the hosts with a trait,
   every host partly used by servers already running, racks of 40 not
   contiguous in name order, 5 zones), for stacks of clusters (LLMN
   rack/host n=2 per cluster, anti-affinity:rack across clusters); each
   case run ``--repeat`` times (min and median printed, the median held
   to its target). Targets (issues #29, #33): 3 x 4 at 10,000 hosts <= 2
   s; 20 x 10 at 10,000 hosts, 50 x 4 at 5,000 and 10 x 10 at 50,000
   placed within the limit. A stack that fits is never "no decision
   found".
3. **A 1,000-server stack through the API** (``POST /stacks``: 100
   groups of 10, soft policies only, 256 soft relationships) at 2,000
   hosts of the varied world in our fake Placement: answered 201 within
   the limit, end to end (issue #48: reading the world from Placement,
   the decision, the hold and the record).
4. **P5's documents through the API** (issue #48,
   :mod:`benchmarks.stack_documents`, ``benchmarks/p5/*.yaml``): the
   20 x 10 clusters of issue #48 on the uniform empty world of 10,000
   hosts and on P3's varied world, 3 x 4 on P3's varied world, and a
   mixed stack with soft policies in a 1,000-host cloud 90% full; each
   the API's wall time (``stacks_<document>_api_s``, within the 10 s
   limit, 3 x 4 within 2 s), with the objective's value beside a 60 s
   reference run (``_cost``, ``_ref_cost``) so that fast cannot mean
   worse.

Each figure is printed with its ratio to its target and to the figure
before #33 (:data:`BEFORE`), ``MISSED`` when it misses.

Every figure is printed under its key (:mod:`benchmarks.figures`), and
the peak memory of 10 x 10 at 50,000 hosts in a process of its own
(``stacks_10x10_50k_peak_mib``, target <= 1 GiB: :func:`peak_memory`).
Run with ``tools/benchmark.sh stacks`` (``--quick``: 50 stacks, 3 x 4
once, no 1,000-server API case, P5's documents once each without their
60 s reference runs; ``--smoke``: 5 stacks, 3 x 4 once, the smallest P5
document once, no time target). The full run takes a minute more per
P5 document for its reference run.
"""

import argparse
import os
import random
import statistics
import sys
import time

from benchmarks.common import launched
from benchmarks.common import Targets
from benchmarks import figures
from benchmarks import stack_documents
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope

PROFILES = ({'VCPU': 64, 'MEMORY_MB': 262144},
            {'VCPU': 32, 'MEMORY_MB': 131072})
SIZES = tuple({'VCPU': vcpu, 'MEMORY_MB': vcpu * gib * 1024}
              for vcpu, gib in ((24, 4), (32, 4), (48, 4), (64, 4),
                                (96, 8), (128, 8)))
"""The varied world's six host sizes (24 to 128 VCPU)."""
RUNNING = ({'VCPU': 1, 'MEMORY_MB': 2048}, {'VCPU': 2, 'MEMORY_MB': 4096},
           {'VCPU': 4, 'MEMORY_MB': 8192}, {'VCPU': 8, 'MEMORY_MB': 16384},
           {'VCPU': 16, 'MEMORY_MB': 32768})
"""The flavors of the servers already running in the varied world."""
TRAIT = 'CUSTOM_SSD'
"""The trait a third of the varied world's hosts carry."""


def datacenter(rng, racks, per_rack):
    hosts, domains = [], []
    for r in range(racks):
        names = [f'r{r}h{i}' for i in range(per_rack)]
        domains.append(Domain(f'rack-{r}', f'rack-{r}', 'rack',
                              frozenset(names)))
        for name in names:
            total = rng.choice(PROFILES)
            used = rng.choice((0, 0, 0.25, 0.5, 0.75))
            free = {rc: int(n * (1 - used)) for rc, n in total.items()}
            hosts.append(solver.HostState(name, f'rp-{name}', free))
    return solver.World(tuple(hosts), Topology([Scope('rack')], domains))


def varied(rng, hosts, per_rack=40, zones=5):
    """A cloud after a year of use: ``hosts`` of six sizes in racks of
    ``per_rack`` (not contiguous in name order) and ``zones`` zones, a
    third carrying :data:`TRAIT`, each already running servers of five
    flavors (:data:`RUNNING`) up to its own share of its size (0 to 90%),
    so that no two hosts' free capacity need be alike."""
    names = [f'host{i:05d}' for i in range(hosts)]
    shuffled = names[:]
    rng.shuffle(shuffled)
    racks = [shuffled[i:i + per_rack]
             for i in range(0, len(shuffled), per_rack)]
    domains = [Domain(f'rack-{r}', f'rack-{r}', 'rack', frozenset(rack))
               for r, rack in enumerate(racks)]
    domains += [Domain(f'zone-{z}', f'zone-{z}', 'zone', frozenset(
        h for r, rack in enumerate(racks) if r % zones == z for h in rack))
        for z in range(zones)]
    states = []
    for name in names:
        total = rng.choice(SIZES)
        share = rng.uniform(0, 0.9)
        used = dict.fromkeys(total, 0)
        while True:
            flavor = rng.choice(RUNNING)
            if any(used[rc] + n > total[rc] * share
                   for rc, n in flavor.items()):
                break
            for rc, n in flavor.items():
                used[rc] += n
        traits = frozenset((TRAIT,)) if rng.random() < 1 / 3 else frozenset()
        states.append(solver.HostState(
            name, f'rp-{name}', {rc: total[rc] - used[rc] for rc in total},
            traits))
    return solver.World(tuple(states), Topology(
        [Scope('zone'), Scope('rack', parent='zone')], domains))


LEAF_POLICIES = ([], ['anti-affinity:host'], ['anti-affinity:rack'],
                 ['affinity:rack'], ['affinity:rack', 'anti-affinity:host'],
                 'llmn')


def random_stack(rng):
    members = []
    for g in range(rng.randint(2, 4)):
        count = rng.randint(2, 6)
        group = {'name': f'g{g}', 'servers': {'count': count, 'flavor': {
            'resources': {'VCPU': rng.choice((4, 8, 16, 32)),
                          'MEMORY_MB': rng.choice((4096, 16384, 65536))}}}}
        policies = rng.choice(LEAF_POLICIES)
        if policies == 'llmn':
            group['llmn'] = {'level1': 'rack', 'level2': 'host',
                             'n': min(2, count)}
        elif policies:
            group['policies'] = list(policies)
        members.append(group)
    root = {'name': 'root', 'members': members}
    if rng.random() < 0.4:
        root['policies'] = ['anti-affinity:rack']
    return model.parse({'stack': {'name': 'bench', 'group': root}})


def one_at_a_time(stack, world):
    """nova's way (``solver.one_at_a_time``): True when every server got
    a host."""
    clauses = solver.compile_stack(stack, world)
    return solver.one_at_a_time(stack, world, clauses) is not None


def share(count, seed=0):
    rng = random.Random(seed)
    fitting = greedy = joint = tried = 0
    while fitting < count:
        tried += 1
        world = datacenter(rng, rng.randint(4, 8), rng.randint(4, 8))
        stack = random_stack(rng)
        reference = solver.decide(stack, world, time_limit=60, merge=False)
        if not reference.feasible:
            continue
        fitting += 1
        greedy += one_at_a_time(stack, world)
        joint += solver.decide(stack, world).feasible
    return fitting, tried, greedy, joint


def clusters(count, size):
    return model.parse({'stack': {'name': 'app', 'group': {
        'name': 'root', 'policies': ['anti-affinity:rack'],
        'members': [{'name': f'c{c}', 'llmn': {
            'level1': 'rack', 'level2': 'host', 'n': 2},
            'servers': {'count': size, 'flavor': {'resources': {
                'VCPU': 4, 'MEMORY_MB': 8192}}}} for c in range(count)]}}})


def soft_stack(groups=100, relationships=256):
    """A 1,000-server stack whose policies are all soft: ``groups``
    leaves of 10 (soft anti-affinity by host or soft affinity by rack,
    one in three asking for :data:`TRAIT`), soft anti-affinity by rack
    across them, and ``relationships`` soft ones between leaves (soft
    affinity by zone or soft anti-affinity by rack)."""
    rng = random.Random(groups)
    members = []
    for g in range(groups):
        flavor = {'resources': {'VCPU': rng.choice((1, 2, 4)),
                                'MEMORY_MB': rng.choice((2048, 4096))}}
        if g % 3 == 0:
            flavor['traits'] = {'required': [TRAIT]}
        members.append({
            'name': f'g{g}',
            'policies': [rng.choice(('soft-anti-affinity:host',
                                     'soft-affinity:rack'))],
            'servers': {'count': 1000 // groups, 'flavor': flavor}})
    pairs = set()
    while len(pairs) < relationships:
        a, b = rng.sample(range(groups), 2)
        pairs.add((min(a, b), max(a, b)))
    return {'stack': {
        'name': 'soft', 'lease_seconds': 600,
        'group': {'name': 'root', 'policies': ['soft-anti-affinity:rack'],
                  'members': members},
        'relationships': [
            {'from': f'g{a}', 'to': f'g{b}', 'policies': [rng.choice((
                'soft-affinity:zone', 'soft-anti-affinity:rack'))]}
            for a, b in sorted(pairs)]}}


def through_api(world, document, limit):
    """POST /stacks of ``document`` to the policy API (noauth2, a SQLite
    store, our fake Placement holding ``world``: its hosts at their size
    of :data:`SIZES`, their usage as one allocation each, traits, the
    rack and zone aggregates as the stored scopes: see
    :class:`.stack_documents.Service`): (seconds, the answer's status
    and body)."""
    hosts = []
    for host in world.hosts:
        total = next(size for size in SIZES
                     if all(size[rc] >= n for rc, n in host.free.items())
                     and size['VCPU'] >= host.free['VCPU'])
        hosts.append(stack_documents.Host(
            host.name, total, {rc: total[rc] - host.free[rc]
                               for rc in total}, host.traits))
    with stack_documents.Service(stack_documents.Cloud(
            tuple(hosts), world.topology), limit) as service:
        return service.post(document)


BEFORE = {'3 x 4 at 10,000 hosts': 3.44, '20 x 10 at 10,000 hosts': 6.69,
          '50 x 4 at 5,000 hosts': 9.05, '10 x 10 at 50,000 hosts': 5.25,
          'soft stack through the API': 150.0}
"""Each figure before #33 (``ce038f3``; median of 3 runs, seconds; the
API one run), on the varied world, on the machine the figures after were
measured on, under the same load. 50 x 4 was answered "no decision
found" then, and the API answered 409 for the same reason."""


def timed_runs(fn, repeat):
    """(min, median, the last result) of ``repeat`` calls of ``fn``,
    each returning (seconds, result)."""
    runs = [fn() for _ in range(repeat)]
    seconds = sorted(s for s, _ in runs)
    return seconds[0], statistics.median(seconds), runs[-1][1]


def peak_memory(count, size, hosts, limit):
    """The peak memory (MiB) of a process of its own that builds the
    varied world of ``hosts`` and decides ``count`` x ``size`` clusters
    once, measured by the launcher P3 uses (:func:`.common.launched`)."""
    _, peak, _ = launched([sys.executable, '-m', 'benchmarks.bench_stacks',
                           '--one', str(count), str(size), str(hosts),
                           str(limit)])
    return peak


def _one(count, size, hosts, limit):
    """:func:`peak_memory`'s process: the world, one decision."""
    world = varied(random.Random(hosts), hosts)
    decision = solver.decide(clusters(count, size), world,
                             time_limit=limit,
                             workers=len(os.sched_getaffinity(0)))
    return 0 if decision.feasible else 1


def main(argv):
    parser = argparse.ArgumentParser(prog='benchmarks stacks')
    parser.add_argument('--quick', action='store_true')
    parser.add_argument('--smoke', action='store_true',
                        help='5 stacks, 3 x 4 once, no time target')
    parser.add_argument('--repeat', type=int, default=3,
                        help='runs of each timed case (min and median '
                        'printed; the median is held to the target)')
    parser.add_argument('--one', nargs=4, type=float,
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        count, size, hosts, limit = args.one
        return _one(int(count), int(size), int(hosts), limit)
    count = 5 if args.smoke else 50 if args.quick else 200
    repeat = 1 if args.quick or args.smoke else args.repeat
    run = (figures.SMOKE if args.smoke else figures.QUICK if args.quick
           else figures.FULL if args.repeat == 3 else None)
    started = time.perf_counter()
    fitting, tried, greedy, joint = share(count)
    print(f'joint vs one at a time: {fitting} random stacks that fit (of '
          f'{tried} drawn), {time.perf_counter() - started:.0f} s')
    print(f'  one at a time (nova order, soft weights then RAM) places '
          f'{greedy / fitting:.0%}; the joint decision places '
          f'{joint / fitting:.0%} (target 100%)')
    targets = Targets(suite='stacks', run=run)
    targets.figure('stacks_fitting', fitting)
    targets.figure('stacks_one_at_a_time_share', 100 * greedy / fitting)
    targets.figure('stacks_joint_share', 100 * joint / fitting)
    targets.require('stacks_joint_places_every_fitting', joint == fitting)
    limit, workers = 10.0, len(os.sched_getaffinity(0))
    print(f'decisions on the varied world (six host sizes, a third with '
          f'{TRAIT}, every host partly used by servers already running, '
          f'racks of 40 not in name order, 5 zones), time limit {limit:g} '
          f's, {workers} worker(s), {repeat} run(s) each, seconds from the '
          'call to the answer:')
    cases = [('3 x 4', 3, 4, 10000, 2.0), ('20 x 10', 20, 10, 10000, limit),
             ('50 x 4', 50, 4, 5000, limit),
             ('10 x 10', 10, 10, 50000, limit)]
    if args.quick or args.smoke:
        cases = cases[:1]
    for name, count, size, hosts, target in cases:
        world = varied(random.Random(hosts), hosts)
        stack = clusters(count, size)

        def run():
            begun = time.perf_counter()
            decision = solver.decide(stack, world, time_limit=limit,
                                     workers=workers)
            return time.perf_counter() - begun, decision
        fastest, median, decision = timed_runs(run, repeat)
        label = f'{name} at {hosts:,} hosts'
        key = f'stacks_{name.replace(" ", "")}_{figures.size(hosts)}'
        print(f'{label}{", optimal" if decision.optimal else ""}:')
        targets.require(f'{key}_placed', decision.feasible)
        targets.check(f'{key}_median_s', median, target, better='lower',
                      before=BEFORE.get(label))
        targets.figure(f'{key}_min_s', fastest)
    if not (args.quick or args.smoke):
        targets.check('stacks_10x10_50k_peak_mib',
                      peak_memory(10, 10, 50000, limit), 1024,
                      better='lower')
        # the API's own share: the world read from Placement, the hold,
        # the record; the decision within the limit
        hosts = 2000
        world = varied(random.Random(hosts), hosts)
        fastest, median, (status, body) = timed_runs(
            lambda: _api_run(world, limit), repeat)
        label = 'soft stack through the API'
        print(f'POST /stacks of 1,000 servers in 100 groups, soft policies '
              f'only, 256 soft relationships, at {hosts:,} hosts (our fake '
              f'Placement): {status}, min {fastest:.2f} s')
        targets.require('stacks_api_1000_answered_201', status == 201)
        if status == 201:
            targets.check('stacks_api_1000_decision_s',
                          body['stack']['seconds'], limit, better='lower')
        # end to end within the limit (issue #48): the world's read, the
        # decision, the hold and the record
        targets.check('stacks_api_1000_median_s', median, limit,
                      better='lower', before=BEFORE.get(label))
        targets.figure('stacks_api_1000_min_s', fastest)
    stack_documents.run(targets, repeat, quick=args.quick, smoke=args.smoke)
    return targets.status()


def _api_run(world, limit):
    seconds, status, body = through_api(world, soft_stack(), limit)
    return seconds, (status, body)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
