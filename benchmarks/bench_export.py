"""P8: ``GET /export`` of a big cloud, from a real Placement.

openstack-placement on a SQLite file, served over HTTP on 127.0.0.1 by
processes of its own (``--placement-processes``, threaded wsgiref, as a
WSGI server runs several workers), holds N compute nodes in racks of 40
(one stored ``rack`` scope), each with VCPU, MEMORY_MB and DISK_GB
(ratios and a reserved amount), nova-compute's 16 traits and a few
others (AVX-512 on half the hosts, two custom traits on some), and 20
servers' allocations (consumer = instance, a project each); the rows
are written to the database directly (through Placement's API it would
take an hour). Nova's answers (servers, aggregates) are in-process lists,
as :class:`.nova.NovaGroups` returns them: Nova's own paging is not what
is measured.

The export's reader (:func:`nova_scoped_policies.api.export.read`) is
timed and its Placement calls counted against the reader before P8
(:func:`before`, kept here: one call at a time, per host its
inventories, traits and allocations, then per server its allocations),
and the scenarios both read must be the same bytes. Targets: a tenth of
the calls; 1,000 hosts in <= 30 s, 5,000 hosts (100,000 servers) in
<= 90 s, ``--big`` (50,000 hosts, a million servers) in <= 900 s. The reader
before is timed up to ``--before-up-to`` hosts (1,000: 23,000 calls) and
estimated beyond at the rate measured (at 50,000 hosts its 1.15 million
calls take hours). Every figure is printed under its key
(:mod:`benchmarks.figures`); ``--smoke``: 20 hosts, both
readers, the same bytes required, no time target.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from oslo_config import cfg
from placement.db.sqlalchemy import models as m
import sqlalchemy
from sqlalchemy import sql as sa

from benchmarks.common import Targets
from benchmarks import figures
from nova_scoped_policies.api import deploy
from nova_scoped_policies.api import export as reader
from nova_scoped_policies.api import hosts as hosts_mod
from nova_scoped_policies.api import repairs
from nova_scoped_policies.api import topologies
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration as store_migration
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies import export
from nova_scoped_policies.placement import client as pc

RACK = 40
SERVERS = 20
NOVA_TRAITS = (
    'COMPUTE_ACCELERATORS', 'COMPUTE_ADDRESS_SPACE_EMULATED',
    'COMPUTE_ADDRESS_SPACE_PASSTHROUGH', 'COMPUTE_DEVICE_TAGGING',
    'COMPUTE_IMAGE_TYPE_RAW', 'COMPUTE_MEM_BACKING_FILE',
    'COMPUTE_NET_ATTACH_INTERFACE', 'COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG',
    'COMPUTE_NODE', 'COMPUTE_SECURITY_STATELESS_FIRMWARE',
    'COMPUTE_STORAGE_VIRTIO_FS', 'COMPUTE_TRUSTED_CERTS',
    'COMPUTE_VOLUME_ATTACH_WITH_TAG', 'COMPUTE_VOLUME_EXTEND',
    'COMPUTE_VOLUME_MULTI_ATTACH', 'OWNER_NOVA')
"""What nova-compute reports of a libvirt host of the functional cloud."""
CUSTOM = ('CUSTOM_GOLD', 'CUSTOM_WINDOWS_LICENSED')
FLAVORS = ({'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20},
           {'VCPU': 4, 'MEMORY_MB': 8192, 'DISK_GB': 40},
           {'VCPU': 1, 'MEMORY_MB': 2048, 'DISK_GB': 10})
TARGETS = {1000: 30.0, 5000: 90.0, 50000: 900.0}
"""Seconds of an export after P8, by hosts, on this 2-core machine
shared with other work (Placement's rate here bounds them: 2 calls a
host at 90-170 calls a second); other sizes: 20 s a 1,000 hosts."""
HOSTS = '1000,5000'
"""The clouds of a full run."""
BIG = '1000,50000'
"""The clouds of a ``--big`` run."""
BEFORE_UP_TO = 1000
"""The reader before P8 is timed up to this many hosts (beyond, its
seconds are estimated at the rate measured)."""
SMOKE_HOSTS = 20
"""Half a rack: both readers in seconds."""

SERVE = """
import os, signal, sys
from oslo_config import cfg
from oslo_policy import opts as policy_opts
from placement import conf
from placement import db_api
from placement import deploy
from tests.functional import wsgi_server

url, processes = sys.argv[1], int(sys.argv[2])
config = cfg.ConfigOpts()
conf.register_opts(config)
config.set_override('connection', url, group='placement_database')
config.set_override('sync_on_startup', True, group='placement_database')
config.set_override('auth_strategy', 'noauth2', group='api')
config([], default_config_files=[])
policy_opts.set_defaults(config, enforce_new_defaults=False)
db_api.configure(config)
app = deploy.loadapp(config)
db_api.get_placement_engine().dispose()
from wsgiref import simple_server
server = simple_server.make_server(
    '127.0.0.1', 0, app, handler_class=wsgi_server._Quiet,
    server_class=wsgi_server._Threaded)
for _ in range(processes - 1):
    if os.fork() == 0:
        break
if os.getpid() == os.getpgid(0):
    print(server.server_port, flush=True)
server.serve_forever()
"""


class Counted(pc.PlacementClient):
    """The Placement client, counting its calls (from any thread)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = 0
        self._lock = threading.Lock()

    def request(self, *args, **kwargs):
        with self._lock:
            self.calls += 1
        return super().request(*args, **kwargs)


class Nova:
    """Nova's answers to the export, as :class:`.nova.NovaGroups` gives
    them."""

    def __init__(self, servers, aggregates):
        self.servers = servers
        self.aggregate_list = aggregates

    def all_servers(self):
        return list(self.servers)

    def all_groups(self):
        return []

    def aggregates(self):
        return list(self.aggregate_list)


def populate(engine, hosts):
    """N compute nodes in racks, with traits and servers, written 1,000
    hosts at a time; returns (Nova's servers, Nova's aggregates, the
    racks' uuids)."""
    with engine.begin() as db:
        classes = dict(db.execute(sa.select(m.ResourceClass.name,
                                            m.ResourceClass.id)).all())
        db.execute(sa.insert(m.Trait), [{'name': n} for n in CUSTOM])
        traits = dict(db.execute(sa.select(m.Trait.name, m.Trait.id)).all())
        racks = [str(uuid.uuid5(uuid.NAMESPACE_OID, f'rack-{r}'))
                 for r in range(-(-hosts // RACK))]
        db.execute(sa.insert(m.PlacementAggregate),
                   [{'id': i + 1, 'uuid': r} for i, r in enumerate(racks)])
        db.execute(sa.insert(m.Project), [
            {'id': p + 1, 'external_id': f'project-{p}'} for p in range(50)])
        db.execute(sa.insert(m.User), [{'id': 1, 'external_id': 'u'}])
    servers = []
    for first in range(0, hosts, 1000):
        rows = _rows(range(first, min(hosts, first + 1000)), classes,
                     traits, servers)
        with engine.begin() as db:
            for table, found in zip(
                    (m.ResourceProvider, m.Inventory,
                     m.ResourceProviderTrait, m.ResourceProviderAggregate,
                     m.Consumer, m.Allocation), rows):
                db.execute(sa.insert(table), found)
    aggregates = [{'uuid': r, 'name': f'rack-{i}', 'metadata': {},
                   'hosts': []} for i, r in enumerate(racks)]
    return servers, aggregates, racks


def _rows(numbers, classes, traits, servers):
    """The rows of these hosts: providers, inventories, traits, racks,
    consumers, allocations; their servers added to ``servers``."""
    providers, inventories, has, members = [], [], [], []
    consumers, allocations = [], []
    for h in numbers:
        rp = h + 1
        providers.append({
            'id': rp, 'name': f'compute-{h:05d}', 'generation': 1,
            'uuid': str(uuid.uuid5(uuid.NAMESPACE_OID, f'host-{h}')),
            'root_provider_id': rp, 'parent_provider_id': None})
        for rc, total, reserved, ratio in (
                ('VCPU', 64, 0, 4.0), ('MEMORY_MB', 262144, 512, 1.5),
                ('DISK_GB', 4000, 0, 1.0)):
            inventories.append({
                'resource_provider_id': rp,
                'resource_class_id': classes[rc], 'total': total,
                'reserved': reserved, 'min_unit': 1, 'max_unit': total,
                'step_size': 1, 'allocation_ratio': ratio})
        names = list(NOVA_TRAITS)
        if h % 2:
            names.append('HW_CPU_X86_AVX512F')
        if h % 10 == 0:
            names.append(CUSTOM[h % 20 // 10])
        has += [{'resource_provider_id': rp, 'trait_id': traits[n]}
                for n in names]
        members.append({'resource_provider_id': rp,
                        'aggregate_id': h // RACK + 1})
        for s in range(SERVERS):
            number = h * SERVERS + s
            consumer = str(uuid.uuid5(uuid.NAMESPACE_OID,
                                      f'server-{number}'))
            project = number % 50
            consumers.append({'uuid': consumer, 'project_id': project + 1,
                              'user_id': 1, 'generation': 1})
            for rc, used in FLAVORS[number % 3].items():
                allocations.append({
                    'resource_provider_id': rp, 'consumer_id': consumer,
                    'resource_class_id': classes[rc], 'used': used})
            servers.append({'id': consumer, 'name': f'vm-{number}',
                            'tenant_id': f'project-{project}'})
    return providers, inventories, has, members, consumers, allocations


def serve(url, processes):
    """Placement's server processes (one process group); (its endpoint,
    the group's process)."""
    proc = subprocess.Popen(
        [sys.executable, '-c', SERVE, url, str(processes)],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    port = int(proc.stdout.readline())
    return f'http://127.0.0.1:{port}', proc


def before(service) -> export.Cloud:
    """The reader of ``GET /export`` before P8: one call at a time, per
    compute node its inventories, traits and allocations, per server its
    allocations (with the Nova and store reads of today's)."""
    placement = service.placement
    nova_servers = {s['id']: s for s in service.nova.all_servers()}
    nova_aggregates = service.nova.aggregates()
    scopes = tuple(service.store.list_scopes())
    topology = topologies.with_hosts(service.store, placement)
    providers = {p['uuid']: p for p in placement.list_providers()}
    roots = {rp: p.get('root_provider_uuid') or rp
             for rp, p in providers.items()}
    names = {rp: providers.get(root, providers[rp])['name']
             for rp, root in roots.items()}
    trees = {}
    for rp in sorted(providers):
        tree = trees.setdefault(roots[rp], {})
        for rc, inv in hosts_mod.inventories(placement, rp).items():
            found = export.Inventory(**{
                k: v for k, v in inv.items() if k in reader.INVENTORY_FIELDS})
            tree[rc] = tree[rc].plus(found) if rc in tree else found
    hosts = [export.Host(providers[root]['name'], tree,
                         tuple(sorted(hosts_mod.traits(placement, root))))
             for root, tree in sorted(trees.items()) if root in providers]
    running = repairs.running(placement, providers, names)
    groups, member_of = reader._groups(service, {})
    servers = [export.Server(
        sid, nova_servers.get(sid, {}).get('name') or sid, found.host,
        nova_servers.get(sid, {}).get('tenant_id') or found.project,
        dict(found.resources), member_of.get(sid))
        for sid, found in sorted(running.items())]
    stacks = [export.Stack(r.id, r.name, r.project_id, r.document)
              for r in stack_db.StackStore(service.store).list()]
    # (no holds: every consumer is a server Nova lists)
    return export.Cloud(scopes, tuple(hosts),
                        tuple(reader._aggregates(scopes, topology,
                                                 nova_aggregates)),
                        tuple(servers), tuple(groups), tuple(stacks),
                        config=reader.scheduler_config(service.conf))


def _timed(read, service):
    """(the scenario's bytes, seconds, Placement calls) of one read."""
    service.placement.calls = 0
    start = time.perf_counter()
    cloud = read(service)
    seconds = time.perf_counter() - start
    return (json.dumps(export.scenario(cloud)).encode(), seconds,
            service.placement.calls)


def _world(tmp, hosts, processes):
    """(Placement's server process, its endpoint, the policy store,
    Nova's servers and aggregates) of a cloud of ``hosts``."""
    url = f'sqlite:///{tmp}/placement.db'
    start = time.perf_counter()
    # Placement's tables, standard traits and classes, made as it starts
    endpoint, proc = serve(url, processes)
    engine = sqlalchemy.create_engine(url)
    servers, aggregates, racks = populate(engine, hosts)
    engine.dispose()
    store = store_api.PolicyStore(f'sqlite:///{tmp}/store.db')
    store_migration.upgrade(store.engine)
    store.create_scope('rack', aggregates=racks)
    print(f'{hosts} hosts, {len(servers)} servers, {len(racks)} racks '
          f'built in {time.perf_counter() - start:.0f} s', flush=True)
    return proc, endpoint, store, servers, aggregates


def measure(hosts, workers, processes, run_before, targets):
    """Export a cloud of ``hosts`` after P8 (and before, when asked):
    print the calls and seconds and hold them to their targets.

    :returns: the calls and seconds after P8, the calls before and, when
        it ran, the seconds before."""
    at = f'export_{figures.size(hosts)}'
    with tempfile.TemporaryDirectory() as tmp:
        proc, endpoint, store, servers, aggregates = _world(
            tmp, hosts, processes)
        try:
            conf = cfg.ConfigOpts()
            nsp_conf.register_opts(conf)
            conf([], default_config_files=[])
            conf.set_override('export_workers', workers,
                              group='scoped_policies_api')
            service = deploy.Service(
                conf, store, Counted.for_endpoint(endpoint, 'admin'),
                nova=Nova(servers, aggregates))
            after, seconds, calls = _timed(reader.read, service)
            print(f'after P8: {calls / seconds:.0f} calls/s ({workers} at a '
                  'time)', flush=True)
            old_seconds = None
            # the reader before: 3 calls a host, 1 a server, 1 an
            # aggregate (and 1 for the providers)
            old_calls = (3 + SERVERS) * hosts + len(aggregates) + 1
            if run_before:
                old, old_seconds, old_calls = _timed(before, service)
                print(f'before P8: {old_calls / old_seconds:.0f} calls/s '
                      '(one at a time)', flush=True)
                targets.require(f'{at}_same_export', old == after)
        finally:
            os.killpg(proc.pid, 15)
            proc.wait(timeout=30)
            store.engine.dispose()
    targets.figure(f'{at}_calls_before', old_calls)
    if old_seconds:
        targets.figure(f'{at}_s_before', old_seconds)
    targets.check(f'{at}_calls', calls, old_calls / 10, better='lower',
                  before=old_calls)
    targets.check(f'{at}_s', seconds,
                  TARGETS.get(hosts, 20.0 * hosts / 1000), better='lower',
                  before=old_seconds and round(old_seconds, 1))
    return calls, seconds, old_calls, old_seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', default=HOSTS,
                        help='the clouds\' sizes, comma-separated')
    parser.add_argument('--before-up-to', type=int, default=BEFORE_UP_TO,
                        help='time the reader before P8 up to this many '
                        'hosts (at 5,000 it takes about 20 minutes here)')
    parser.add_argument('--workers', type=int, default=16,
                        help='[scoped_policies_api]export_workers')
    parser.add_argument('--placement-processes', type=int, default=2)
    parser.add_argument('--quick', action='store_true',
                        help='1,000 hosts only')
    parser.add_argument('--smoke', action='store_true',
                        help=f'{SMOKE_HOSTS} hosts, both readers, no time '
                        'target')
    parser.add_argument('--big', action='store_true',
                        help=f'{BIG}: the big cloud (a million servers), '
                        'the reader before P8 timed at 1,000 hosts and '
                        'estimated at 50,000')
    args = parser.parse_args(argv)
    default = args.hosts == HOSTS and args.before_up_to == BEFORE_UP_TO
    if args.smoke:
        sizes, run = [SMOKE_HOSTS], figures.SMOKE
    elif args.big:
        sizes = [int(n) for n in BIG.split(',')]
        run = figures.BIG if args.before_up_to == BEFORE_UP_TO else None
    elif args.quick:
        sizes, run = [1000], figures.QUICK
    else:
        sizes = [int(n) for n in args.hosts.split(',')]
        run = figures.FULL if default else None
    print(f'Placement in {args.placement_processes} processes; '
          f'{os.cpu_count()} cores shared with other work', flush=True)
    targets = Targets(suite='export', run=run)
    per_call = None
    for hosts in sizes:
        calls, seconds, old_calls, old_seconds = measure(
            hosts, args.workers, args.placement_processes,
            hosts <= args.before_up_to, targets)
        if old_seconds:
            per_call = old_seconds / old_calls
        elif per_call:
            targets.figure(f'export_{figures.size(hosts)}_s_before_'
                           'estimated', old_calls * per_call)
    return targets.status()


if __name__ == '__main__':
    sys.exit(main())
