"""The worlds the simulator's figures are measured on.

``cloud`` is modelled on a cloud after a year of use (issue #33): hosts
of six sizes, traits on a third of them, racks whose hosts are scattered
in name order (a rack is not a name range) in zones of their own, and
thousands of servers of five flavors booted through the scheduler before
the groups' (so every host's usage differs from its neighbours'), then
groups of every policy kind receiving servers in requests of 1 to 10, a
quarter of them requiring a trait (one group more of them than its rack
holds: its last boots fail). Everything is drawn from one seed and
written as explicit hosts and aggregates, as an operator's export of a
cloud would be (no ``generate:``).

``uniform`` is the world the first figures came from: hosts of one size,
racks of consecutive hosts, no traits and no servers before the groups'.
"""

import random

SIZES = (
    {'VCPU': 24, 'MEMORY_MB': 98304, 'DISK_GB': 1000},
    {'VCPU': 32, 'MEMORY_MB': 131072, 'DISK_GB': 2000},
    {'VCPU': 48, 'MEMORY_MB': 196608, 'DISK_GB': 2000},
    {'VCPU': 64, 'MEMORY_MB': 262144, 'DISK_GB': 4000},
    {'VCPU': 96, 'MEMORY_MB': 393216, 'DISK_GB': 4000},
    {'VCPU': 128, 'MEMORY_MB': 524288, 'DISK_GB': 8000},
)
"""The host sizes of the cloud world."""
FLAVORS = (
    {'VCPU': 1, 'MEMORY_MB': 2048, 'DISK_GB': 10},
    {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20},
    {'VCPU': 4, 'MEMORY_MB': 8192, 'DISK_GB': 40},
    {'VCPU': 8, 'MEMORY_MB': 32768, 'DISK_GB': 80},
    {'VCPU': 16, 'MEMORY_MB': 65536, 'DISK_GB': 160},
)
"""The five flavors of the cloud world."""
POLICIES = (
    (['anti-affinity:rack'], {}),
    (['anti-affinity:rack'], {'max_server_per_rack': 2}),
    (['affinity:zone'], {}),
    (['anti-affinity:zone'], {'max_server_per_zone': 5}),
    (['soft-anti-affinity:rack'], {}),
    (['affinity:rack', 'anti-affinity:host'], {}),
    (['soft-affinity:zone'], {}),
    (['spread:rack'], {}),
    (['soft-spread:zone', 'soft-anti-affinity:host'], {}),
    (['anti-affinity:host', 'anti-affinity:rack'],
     {'max_server_per_rack': 3}),
)
"""The groups' policies and rules, in turn: hard and soft, affinity and
anti-affinity by host, rack and zone, limits and spreads."""
WORLDS = ('cloud', 'uniform')


def _requests(rng, name, count, flavor, group=None, trait=None):
    """``count`` servers of ``flavor`` in boots of 1 to 10."""
    found = []
    done = 0
    while done < count:
        n = min(rng.randint(1, 10), count - done)
        boot = {'name': f'{name}-b{len(found)}', 'count': n,
                'flavor': {'resources': dict(flavor)}}
        if group:
            boot['group'] = group
        if trait:
            boot['flavor']['extra_specs'] = {f'trait:{trait}': 'required'}
        found.append({'boot': boot})
        done += n
    return found


def cloud(hosts=5000, seed=33, running=None, groups=None, members=20):
    """The cloud world's scenario document.

    :param hosts: hosts, 40 a rack, 5 zones.
    :param seed: what every choice is drawn from.
    :param running: servers booted before the groups' (default 80% of
        ``hosts``).
    :param groups: groups (default one per 100 hosts), each receiving
        ``members`` servers.
    """
    rng = random.Random(seed)
    running = hosts * 4 // 5 if running is None else running
    groups = max(1, hosts // 100) if groups is None else groups
    racks = max(1, hosts // 40)
    found = []
    for i in range(hosts):
        traits = []
        if rng.random() < 1 / 3:
            traits.append(rng.choice(('CUSTOM_SSD', 'CUSTOM_SSD',
                                      'CUSTOM_NVME')))
        if rng.random() < 0.05:
            traits.append('CUSTOM_GPU')
        found.append({'name': f'cn{i:05d}', 'resources': dict(
            rng.choice(SIZES)), 'traits': traits})
    # a rack's hosts are scattered in name order: hosts were bought and
    # racked over the years
    names = [h['name'] for h in found]
    rng.shuffle(names)
    aggregates = [{'name': f'rack-{r:04d}', 'scope': 'rack',
                   'hosts': sorted(names[r::racks])} for r in range(racks)]
    zone_of = [rng.randrange(5) for _ in range(racks)]
    aggregates += [{'name': f'zone-{z}', 'scope': 'zone',
                    'hosts': sorted(h for r in range(racks)
                                    if zone_of[r] == z
                                    for h in aggregates[r]['hosts'])}
                   for z in range(5)]
    aggregates = [a for a in aggregates if a['hosts']]
    requests = []
    per_flavor = -(-running // len(FLAVORS))
    for f, flavor in enumerate(FLAVORS):
        requests += _requests(rng, f'vm{f}', min(per_flavor, running -
                                                 f * per_flavor), flavor)
    rng.shuffle(requests)
    documents = []
    per_group = []
    for g in range(groups):
        policies, rules = POLICIES[g % len(POLICIES)]
        documents.append({'name': f'g{g:03d}', 'project': f'tenant-{g % 7}',
                          'policies': list(policies), 'rules': dict(rules)})
        # a quarter of the groups require a trait; one of them asks for
        # more than its rack has (affinity:rack, a host each): its last
        # boots fail, with every host's reasons
        trait = 'CUSTOM_SSD' if g % 4 == 2 or g == 5 else None
        per_group.append(_requests(rng, f'g{g:03d}', members,
                                   FLAVORS[1 + g % 3], f'g{g:03d}', trait))
    # the groups' boots interleaved, as tenants boot at once
    while any(per_group):
        for boots in per_group:
            if boots:
                requests.append(boots.pop(0))
    return {'scopes': {'rack': {}, 'zone': {}},
            'config': {'enable_scoped_policy_query_filter': True},
            'hosts': found, 'aggregates': aggregates,
            'groups': documents, 'requests': requests}


def uniform(hosts=5000, groups=20, members=50, batch=5):
    """The uniform world: one host size, racks of 40 consecutive hosts,
    ``anti-affinity:rack`` groups (at most 2 a rack) in boots of
    ``batch``."""
    flavor = {'resources': {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}}
    return {
        'scopes': {'rack': {}},
        'config': {'enable_scoped_policy_query_filter': True},
        'generate': {'hosts': {'count': hosts, 'prefix': 'n',
                               'resources': SIZES[3]},
                     'scopes': {'rack': max(1, hosts // 40)}},
        'groups': [{'name': f'g{g}', 'policies': ['anti-affinity:rack'],
                    'rules': {'max_server_per_rack': 2}}
                   for g in range(groups)],
        'requests': [{'boot': {'name': f'g{g}-b{b}', 'group': f'g{g}',
                               'count': batch, 'flavor': flavor}}
                     for b in range(members // batch)
                     for g in range(groups)],
    }


def placements(document):
    """The servers the document's requests boot."""
    return sum(r['boot']['count'] for r in document['requests']
               if 'boot' in r)
