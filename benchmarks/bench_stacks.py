"""P5: joint decisions for stacks (issue #14).

1. **Joint vs one at a time** on 200 random stacks that fit (a stack fits
   when the solver with one variable per host and a long time limit finds a
   decision, independently of the class merging under test) in random
   datacenters (4-8 racks of 4-8 hosts, hosts partly used). One at a time
   is nova's way: servers in document order, each on the passing host with
   the most free RAM (nova's RAMWeigher spreads), checked by our engine
   against the servers placed before it. Printed: the share of fitting
   stacks each places; target: the joint decision places 100%.
2. **Decision time** as a user waits (``decide``: classes, model, solve,
   replay) at 1,000 / 5,000 / 10,000 hosts (40 per rack, hosts partly
   used) for the spec's stack (3 clusters x 4 VMs, LLMN rack/host n=2 per
   cluster, anti-affinity:rack across clusters) and for 10 clusters x 8.
   Target: 3 x 4 at 5,000 hosts under 2 s. At 1,000 hosts also one
   variable per host, printed as the ratio merged : per host.

Run with ``tools/benchmark.sh stacks`` (``--quick``: 50 stacks, 1,000 and
5,000 hosts).
"""

import argparse
import random
import sys
import time

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
    """nova's way: each server on the best passing host, never revisited.
    Returns True when every server got a host."""
    clauses = solver.compile_stack(stack, world)
    free = {h.name: dict(h.free) for h in world.hosts}
    placed = {}
    for server in stack.servers:
        need = server.flavor.resources
        fits = [h for h in free
                if all(free[h].get(rc, 0) >= n for rc, n in need.items())
                and not solver.check_server(clauses, world.topology, placed,
                                            server.name, h)]
        if not fits:
            return False
        best = max(fits, key=lambda h: (free[h].get('MEMORY_MB', 0), h))
        for rc, n in need.items():
            free[best][rc] -= n
        placed[server.name] = best
    return True


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
    status = 0 if joint == fitting else 1
    sizes = (1000, 5000) if args.quick else (1000, 5000, 10000)
    for name, stack in (('3 x 4', clusters(3, 4)),
                        ('10 x 8', clusters(10, 8))):
        for hosts in sizes:
            world = datacenter(random.Random(hosts), hosts // 40, 40)
            decision = solver.decide(stack, world, time_limit=60)
            line = (f'{name} at {hosts:>6,} hosts: {decision.seconds:.2f} s'
                    f' ({"placed" if decision.feasible else "NOT placed"}'
                    f'{", optimal" if decision.optimal else ""})')
            if hosts == 1000:
                per_host = solver.decide(stack, world, time_limit=120,
                                         merge=False)
                line += (f'; one variable per host {per_host.seconds:.2f} s'
                         f' = {per_host.seconds / decision.seconds:.1f} x')
            if name == '3 x 4' and hosts == 5000:
                ok = decision.seconds < 2
                line += f' (target < 2 s: {"met" if ok else "MISSED"})'
                status |= 0 if ok else 1
            print(line, flush=True)
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
