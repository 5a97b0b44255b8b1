"""P5: joint decisions for stacks (issue #14).

1. **Joint vs one at a time** on 200 random stacks that fit (a stack fits
   when the solver with one variable per host and a long time limit finds a
   decision, independently of the class merging under test) in random
   datacenters (4-8 racks of 4-8 hosts, hosts partly used). One at a time
   is nova's way: servers in document order, each on the passing host with
   the most free RAM (nova's RAMWeigher spreads), checked by our engine
   against the servers placed before it. Printed: the share of fitting
   stacks each places; target: the joint decision places 100%.
2. **Decision time** as a user waits (``decide``: the one-at-a-time
   start, classes, model, solve, replay) with the service's default time
   limit (``[scoped_policies_api] stack_time_limit``, 10 s) and every core,
   at 40 hosts per rack, hosts partly used, for stacks of clusters (LLMN
   rack/host n=2 per cluster, anti-affinity:rack across clusters).
   Targets (issue #29): 3 x 4 at 10,000 hosts <= 2 s; 20 x 10 at 10,000
   hosts <= 10 s; 50 x 4 at 5,000 hosts placed; 10 x 10 at 50,000 hosts
   <= 20 s. A stack that fits is never "no decision found".

Run with ``tools/benchmark.sh stacks`` (``--quick``: 50 stacks, 1,000 and
5,000 hosts).
"""

import argparse
import os
import random
import sys
import time

from benchmarks.common import Targets
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope

PROFILES = ({'VCPU': 64, 'MEMORY_MB': 262144},
            {'VCPU': 32, 'MEMORY_MB': 131072})


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


def main(argv):
    parser = argparse.ArgumentParser(prog='benchmarks stacks')
    parser.add_argument('--quick', action='store_true')
    args = parser.parse_args(argv)
    count = 50 if args.quick else 200
    started = time.perf_counter()
    fitting, tried, greedy, joint = share(count)
    print(f'joint vs one at a time: {fitting} random stacks that fit (of '
          f'{tried} drawn), {time.perf_counter() - started:.0f} s')
    print(f'  one at a time (nova order and RAM weigher) places '
          f'{greedy / fitting:.0%}; the joint decision places '
          f'{joint / fitting:.0%} (target 100%)')
    targets = Targets()
    targets.require('the joint decision places every fitting stack',
                    joint == fitting)
    limit, workers = 10.0, os.cpu_count() or 1
    cases = [('3 x 4', 3, 4, 10000, 2.0), ('20 x 10', 20, 10, 10000, 10.0),
             ('50 x 4', 50, 4, 5000, None),
             ('10 x 10', 10, 10, 50000, 20.0)]
    if args.quick:
        cases = cases[:1]
    for name, count, size, hosts, target in cases:
        world = datacenter(random.Random(hosts), hosts // 40, 40)
        decision = solver.decide(clusters(count, size), world,
                                 time_limit=limit, workers=workers)
        label = f'{name} at {hosts:,} hosts'
        targets.require(f'{label} placed ({decision.seconds:.2f} s'
                        f'{", optimal" if decision.optimal else ""})',
                        decision.feasible)
        if target is not None:
            targets.check(f'{label}, seconds', decision.seconds, target,
                          better='lower', unit=' s')
    return targets.status()


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
