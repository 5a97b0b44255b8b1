"""A small cloud as the Watcher plugins read it: Watcher's compute data
model (built as Watcher's own tests build it, from ``element.ComputeNode``
and ``element.Instance``), the policy store in an SQLite file, and Nova's
aggregates and group members."""

import datetime
import uuid

from watcher.decision_engine.model import element
from watcher.decision_engine.model import model_root

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.policy import parse_document

PROJECT = 'c0ffee00c0ffee00c0ffee00c0ffee00'
FLAVOR = {'vcpus': 1, 'memory': 512, 'disk': 1}


def uid(name):
    """A stable uuid for a name of the test (instances, aggregates)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f'nsp-watcher/{name}'))


def node(name, vcpus=2, status='enabled', state='up', **fields):
    attributes = dict(uuid=uid(f'node/{name}'), hostname=name,
                      status=status, state=state, memory=8192,
                      memory_mb_reserved=0, memory_ratio=1.0, disk=100,
                      disk_gb_reserved=0, disk_ratio=1.0, vcpus=vcpus,
                      vcpu_reserved=0, vcpu_ratio=1.0)
    attributes.update(fields)
    return element.ComputeNode(**attributes)


def instance(name, host, state='active', **fields):
    attributes = dict(uuid=uid(name), name=name, state=state,
                      memory=FLAVOR['memory'], disk=FLAVOR['disk'],
                      vcpus=FLAVOR['vcpus'], metadata={},
                      project_id=uid('project'), host=host,
                      hypervisor_hostname=host,
                      created=datetime.datetime(2026, 1, 1,
                                                tzinfo=datetime.timezone.utc))
    attributes.update(fields)
    return element.Instance(**attributes)


def compute_model(nodes, where, **instance_fields):
    """:param nodes: ComputeNode elements.
    :param where: instance name -> host name.
    :param instance_fields: instance name -> extra fields."""
    found = model_root.ModelRoot()
    by_name = {}
    for n in nodes:
        found.add_node(n)
        by_name[n.hostname] = n
    for name, host in where.items():
        inst = instance(name, host, **instance_fields.get(name, {}))
        found.add_instance(inst)
        found.map_instance(inst, by_name[host])
    return found


class Nova:
    """Nova's aggregates (by uuid) and server group members."""

    def __init__(self, aggregates, members=None):
        self.aggregates = {uid(a): frozenset(h)
                           for a, h in aggregates.items()}
        self.groups = {g: [uid(m) for m in ms]
                       for g, ms in (members or {}).items()}

    def aggregate_hosts(self):
        return dict(self.aggregates)

    def members(self, group):
        return list(self.groups.get(group, ()))


def store(path, racks):
    """A migrated policy store with the scope ``rack`` whose domains are
    the aggregates named ``racks``."""
    found = store_api.PolicyStore(f'sqlite:///{path}')
    migration.upgrade(found.engine)
    found.create_scope('rack', aggregates=[uid(r) for r in racks])
    return found


def group(found, name, policies, members=(), **rules):
    document = {'policies': policies}
    if rules:
        document['rules'] = rules
    record = found.create_group(uid(name), PROJECT,
                                parse_document(document), name=name)
    for member in members:
        found.add_member(record.uuid, uid(member))
    return record.uuid


def stack(found, name, document, booted, held=None):
    """Save a stack decision: ``booted`` server name -> (instance name,
    host), ``held`` server name -> (host, resources) still held."""
    servers = {n: stack_db.StackServer(n, h, uid(f'node/{h}'),
                                       {'VCPU': 1}, None,
                                       stack_db.BOOTED, uid(i))
               for n, (i, h) in booted.items()}
    for n, (h, resources) in (held or {}).items():
        servers[n] = stack_db.StackServer(n, h, uid(f'node/{h}'),
                                          dict(resources), uid(f'hold/{n}'))
    record = stack_db.StackRecord(
        uid(f'stack/{name}'), name, PROJECT, 'user', stack_db.CONFIRMED,
        3600, datetime.datetime.now(datetime.timezone.utc)
        + datetime.timedelta(hours=1), 0.1, document, servers)
    stack_db.StackStore(found).create(record)
    return record.id


PAIRS = {'stack': {'name': 's', 'group': {'name': 'root', 'members': [
    {'name': name, 'policies': ['affinity:rack'],
     'servers': {'count': 2, 'flavor': {'resources': {'VCPU': 1}}}}
    for name in ('p', 'q')]}}}
"""Two pairs, each pair in one rack."""
