"""The repair service's cloud, read where Watcher reads the cloud.

:func:`cloud` reads it into the records of the repair service
(:mod:`nova_scoped_policies.repair.service`) and :func:`plan` asks the
service for the repair of every group and stack decision, as an
administrator:

* **Hosts**: the compute nodes of Watcher's compute data model (the
  audit's scope), each with the capacity it has left there (Placement's
  inventories with reserved and allocation ratios, minus the instances on
  it), less what stack decisions hold on it and Watcher's model does not
  see. A node that is disabled or down takes no new server: no capacity.
* **Servers**: the model's instances, with their node and flavor (VCPU,
  MEMORY_MB, DISK_GB). Besides the targets' members, every other
  instance is a *bystander* the plan may move to make room, as the policy
  API's plans do (``bystanders=False``: only the targets' members move).
  Only active instances can be live-migrated: the others, and those the
  audit's scope excludes, count where they are and never move. Nor does a
  bystander whose owner locked it, or whose flavor names traits
  (``trait:...`` extra specs): Watcher's model has no hosts' traits, and a
  move made only to make room must not be one nova-scheduler refuses.
* **Targets**: every server group with scoped policies in the policy store
  (its members there and Nova's, less the excluded), and every stack
  decision (the instances booted for its servers).
* **Topology**: the store's scopes; their domains' hosts are Nova's host
  aggregates (Watcher's data model does not keep aggregates).

Host names are Watcher's (the compute service's host, what a ``migrate``
action names).
"""

import math
import typing

from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.repair import planner
from nova_scoped_policies.repair import service
from nova_scoped_policies import topology as topo

RESOURCES = (('VCPU', 'vcpu', 'vcpus'), ('MEMORY_MB', 'memory', 'memory'),
             ('DISK_GB', 'disk', 'disk'))
"""Resource class, its key in a node's free resources, its instance
field."""
MOVABLE = 'active'
ENABLED = 'enabled'
UP = 'up'


class Nova(typing.Protocol):
    """What the world reads of Nova."""

    def aggregate_hosts(self) -> typing.Mapping[str, typing.FrozenSet[str]]:
        """Every host aggregate's compute hosts: aggregate uuid -> hosts."""

    def members(self, group: str) -> typing.List[str]:
        """A server group's members as Nova lists them (none when Nova
        does not know it)."""


class WatcherNova:
    """Nova through Watcher's own client (``[nova]`` in watcher.conf).

    :param connection: an openstacksdk connection.
    """

    def __init__(self, connection) -> None:
        self.connection = connection

    @classmethod
    def from_watcher(cls) -> 'WatcherNova':
        from watcher.common import nova_helper
        return cls(nova_helper.NovaHelper().connection)

    def aggregate_hosts(self) -> typing.Dict[str, typing.FrozenSet[str]]:
        return {a.uuid: frozenset(a.hosts or ())
                for a in self.connection.compute.aggregates() if a.uuid}

    def members(self, group: str) -> typing.List[str]:
        found = self.connection.compute.find_server_group(
            group, ignore_missing=True)
        return list(found.member_ids or ()) if found is not None else []


def _resources(instance) -> typing.Dict[str, int]:
    return {rc: int(getattr(instance, field))
            for rc, _, field in RESOURCES}


def _placements(compute_model) -> typing.Dict[str, typing.Any]:
    """instance uuid -> (instance, its node), for every mapped instance."""
    found = {}
    for node in compute_model.get_all_compute_nodes().values():
        for instance in compute_model.get_node_instances(node):
            found[instance.uuid] = (instance, node)
    return found


def _held(stacks: typing.Iterable[stack_db.StackRecord]
          ) -> typing.Dict[str, typing.Dict[str, int]]:
    """provider uuid or host name -> what stack decisions hold there."""
    found: typing.Dict[str, typing.Dict[str, int]] = {}
    for record in stacks:
        for name in record.held:
            server = record.servers[name]
            where = found.setdefault(server.provider or server.host, {})
            for rc, n in server.resources.items():
                where[rc] = where.get(rc, 0) + n
    return found


def _hosts(compute_model, held: typing.Mapping[str, typing.Mapping[str, int]]
           ) -> typing.Tuple[planner.Host, ...]:
    found = []
    for node in compute_model.get_all_compute_nodes().values():
        left = compute_model.get_node_free_resources(node)
        hold = held.get(node.uuid) or held.get(node.hostname) or {}
        usable = node.status == ENABLED and node.state == UP
        free = {rc: max(0, math.floor(left[key]) - hold.get(rc, 0))
                if usable else 0 for rc, key, _ in RESOURCES}
        found.append(planner.Host(node.hostname, free, frozenset(),
                                  node.uuid))
    return tuple(sorted(found, key=lambda h: h.name))


TRAIT = 'trait:'
"""Prefix of a flavor's extra specs that require or forbid a trait."""


def _movable(instance, member: bool) -> bool:
    """An active instance Watcher's scope does not exclude may move; a
    bystander (``member`` False) only when its owner did not lock it and
    its flavor names no trait."""
    if instance.state != MOVABLE or instance.watcher_exclude:
        return False
    if member:
        return True
    specs = getattr(instance, 'flavor_extra_specs', None) or {}
    return not getattr(instance, 'locked', False) and not any(
        key.startswith(TRAIT) for key in specs)


def _servers(placements, members: typing.AbstractSet[str]
             ) -> typing.Dict[str, service.Server]:
    """Every instance the model places, as the repair service takes it,
    each movable or not (:func:`_movable`; ``members``: the instances of
    a group or stack)."""
    found = {}
    for sid in sorted(placements):
        instance, node = placements[sid]
        found[sid] = service.Server(
            sid, node.hostname, _resources(instance),
            getattr(instance, 'project_id', '') or '',
            movable=_movable(instance, sid in members))
    return found


def _group_members(record, nova: Nova) -> typing.List[str]:
    """The members a group's scoped policies count (Nova's too)."""
    return list(record.counted(nova.members(record.uuid)))


def cloud(compute_model, store, nova: Nova) -> service.Cloud:
    """Every stored group and stack decision over the hosts and instances
    of Watcher's compute data model, as the repair service takes them.

    :param compute_model: Watcher's (scoped) compute data model.
    :param store: the policy store (``db.api.PolicyStore``).
    :param nova: Nova's aggregates and server group members.
    """
    records = store.list_scopes()
    aggregates = {a for r in records for a in r.aggregates}
    domains = {a: hosts for a, hosts in nova.aggregate_hosts().items()
               if a in aggregates}
    topology = topo.from_scope_records(records, domains)
    placements = _placements(compute_model)
    where = {sid: node.hostname for sid, (_, node) in placements.items()}

    groups = {g.uuid: g for g in store.list_groups()}
    stacks = stack_db.StackStore(store).list()

    def members(uuid: str) -> typing.List[str]:
        if uuid in groups:
            return _group_members(groups[uuid], nova)
        return nova.members(uuid)

    def stack(record: stack_db.StackRecord) -> service.Stack:
        """A stack decision; its relationships' existing ends where
        Watcher's model places them."""
        servers, server_groups = service.existing(record.document)
        return service.Stack(
            record.id, record.project_id, record.document,
            dict(record.instances), {u: where.get(u) for u in servers},
            {u: tuple(sorted({where[m] for m in members(u) if m in where}))
             for u in server_groups})
    found = tuple(service.Group(uuid, g.project_id, g.document,
                                tuple(members(uuid)))
                  for uuid, g in groups.items())
    read = tuple(stack(r) for r in stacks)
    mine = {m for g in found for m in g.members} | {
        i for s in read for i in s.instances.values()}
    return service.Cloud(
        _hosts(compute_model, _held(stacks)), _servers(placements, mine),
        found, read, topology)


def plan(compute_model, store, nova: Nova, time_limit: float,
         bystanders: bool = True) -> planner.Plan:
    """The repair plan of every group and stack decision (the repair
    service's).

    :param bystanders: other instances may move to make room (False: only
        the groups' and stacks' own)."""
    return service.plan(lambda wide: cloud(compute_model, store, nova),
                        service.Asked(), service.ADMIN, time_limit,
                        bystanders=bystanders).plan


def read(compute_model, store, nova: Nova,
         bystanders: bool = True) -> planner.Problem:
    """The planner's problem :func:`plan` solves."""
    return service.assemble(cloud(compute_model, store, nova),
                            service.Asked(), service.ADMIN,
                            bystanders=bystanders).problem
