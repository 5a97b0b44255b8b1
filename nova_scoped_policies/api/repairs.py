"""What a repair plan reads, and the plan as one caller may see it.

* The targets: a server group's stored policies over its members (those
  added through the store and, with ``[nova]``, Nova's own), a stack's
  clauses over the instances booted for its servers, or every group and
  stack (admins).
* The servers: their host and what they use, from their allocations in
  Placement (consumer = instance).
* The hosts: every host that could take one of those servers (one ``GET
  /allocation_candidates`` per distinct flavor, whose provider summaries
  give capacity, usage and traits) and the hosts the servers run on.
* The topology: the stored scopes the targets name, with their hosts.
* Read *wide* (when the target's own servers do not repair it in one
  move): every compute host, every instance on one (its consumers in
  Placement of type ``INSTANCE``, with their project) as a server the
  plan may move to make room, and every other stored group and stack as
  the planner's ``kept`` (their hard policies kept by any such move).

:func:`cloud` reads it into the records of the repair service
(:mod:`nova_scoped_policies.repair.service`), which chooses the targets
the caller may repair, assembles the planner's problem and decides when
to read wide (:func:`plan`).

:func:`fingerprint` sums up what a plan depends on besides capacity (the
targets' policies, their servers and where they run, and the servers
the plan moves); an apply rechecks it and replays the plan on a fresh
read of capacity before any move.
"""

import dataclasses
import hashlib
import typing

from oslo_serialization import jsonutils
import webob.exc

from nova_scoped_policies.api import hosts as hosts_mod
from nova_scoped_policies.api import topologies
from nova_scoped_policies.api import visibility
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies import errors
from nova_scoped_policies import identifiers
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import holds
from nova_scoped_policies.repair import planner
from nova_scoped_policies.repair import service as repair_service
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import service as stack_service

ALL = repair_service.ALL
CONSUMER_TYPES = '1.38'
"""Placement's microversion that names a consumer's type."""
NOT_SERVERS = (holds.CONSUMER_TYPE, 'MIGRATION')
"""Consumer types that are no server (a stack's hold, the source side of
a migration); Nova's instances are ``INSTANCE`` or, allocated before
1.38, ``UNKNOWN``."""
GROUP = repair_service.GROUP
STACK = repair_service.STACK


Asked = repair_service.Asked


def asked(body: typing.Mapping[str, typing.Any]) -> Asked:
    """What a request body asks to repair."""
    for kind in (GROUP, STACK):
        if kind in body:
            return Asked(kind, str(body[kind]))
    return Asked(ALL)


@dataclasses.dataclass(frozen=True)
class Read:
    """The world a plan reads.

    :param problem: the planner's problem.
    :param owners: target id -> its project.
    :param names: server id -> how its target names it (a stack's server
        name, else the instance uuid).
    :param host: real host name -> what the reader sees of it.
    :param projects: server id -> its project.
    """

    problem: planner.Problem
    owners: typing.Mapping[str, str]
    names: typing.Mapping[str, str]
    host: typing.Callable[[str], str] = str
    projects: typing.Mapping[str, str] = dataclasses.field(
        default_factory=dict)

    @classmethod
    def of(cls, found: repair_service.Assembled) -> 'Read':
        return cls(found.problem, found.owners, found.names,
                   projects=found.projects)


def _group_members(service, record) -> typing.List[str]:
    """The members a group's scoped policies count (Nova's too)."""
    return list(record.counted(service.nova.members(record.uuid)
                               if service.nova is not None else ()))


def _records(service, asked: Asked, wide: bool):
    """(group records, stack records): the one asked for (none when there
    is no such), or every one (``all``, or a wide read)."""
    store = stack_db.StackStore(service.store)
    if wide or asked.kind == ALL:
        return service.store.list_groups(), store.list()
    try:
        if asked.kind == GROUP:
            return [service.store.get_group(asked.id)], []
        return [], [store.get(asked.id)]
    except store_api.NotFound:
        return [], []


def _groups_and_stacks(service, asked: Asked, wide: bool):
    """The groups and stacks of a read, as the repair service takes
    them."""
    group_records, stack_records = _records(service, asked, wide)
    groups = tuple(repair_service.Group(
        r.uuid, r.project_id, r.document, tuple(_group_members(service, r)))
        for r in group_records)
    stacks = []
    for record in stack_records:
        servers, server_groups = _ends(
            service, *repair_service.existing(record.document))
        stacks.append(repair_service.Stack(
            record.id, record.project_id, record.document,
            dict(record.instances), servers, server_groups))
    return groups, tuple(stacks)


def ends(service, stack: model.Stack):
    """Where the existing servers and groups of the stack's
    relationships are."""
    return _ends(service, stack.existing('server'),
                 stack.existing('server_group'))


def _ends(service, server_ids: typing.Iterable[str],
          group_ids: typing.Iterable[str]):
    """(existing server -> its host, existing group -> its members'
    hosts)."""
    servers = dict(hosts_mod.member_placements(
        service.placement, server_ids).hosts)
    groups: typing.Dict[str, typing.Tuple[str, ...]] = {}
    for uuid in group_ids:
        try:
            members = _group_members(service, service.store.get_group(uuid))
        except store_api.NotFound:
            members = (service.nova.members(uuid)
                       if service.nova is not None else [])
        where = hosts_mod.member_placements(service.placement, members)
        groups[uuid] = tuple(h for h in where.hosts.values() if h)
    return servers, groups


def _servers(placement: pc.PlacementClient, ids: typing.Iterable[str],
             names: typing.Mapping[str, str],
             instances_only: bool = False
             ) -> typing.Dict[str, repair_service.Server]:
    """The servers that run: host and resources from their allocations
    on the compute node, root provider of the tree, and project. With
    ``instances_only``, consumers that are not instances (stack holds,
    migrations) are left out."""
    found = {}
    for sid in sorted(set(ids)):
        server = consumer(placement, sid, names, instances_only)
        if server is not None:
            found[sid] = server
    return found


def consumer(placement: pc.PlacementClient, sid: str,
             names: typing.Mapping[str, str], instances_only: bool = False
             ) -> typing.Optional[repair_service.Server]:
    """One consumer as a server that runs (one ``GET
    /allocations/{consumer}``), or None: it has no allocations, none on
    a provider of ``names``, or (``instances_only``) it is no instance.

    :param names: provider uuid -> the name of the host it is part of.
    """
    body = placement.request(
        'GET', f'/allocations/{sid}',
        version=CONSUMER_TYPES if instances_only else None).json()
    data = body['allocations']
    if not data or (instances_only and
                    body.get('consumer_type') in NOT_SERVERS):
        return None
    return server(sid, {rp: d['resources'] for rp, d in data.items()},
                  names, body.get('project_id', ''))


def server(sid: str,
           allocations: typing.Mapping[str, typing.Mapping[str, int]],
           names: typing.Mapping[str, str], project: str
           ) -> typing.Optional[repair_service.Server]:
    """A consumer's allocations as a server that runs: on the host of the
    first of its providers (by uuid) with one, using what they add up to
    (None when no provider has a host).

    :param allocations: provider uuid -> resource class -> amount.
    :param names: provider uuid -> the name of the host it is part of.
    :param project: the consumer's project.
    """
    resources: typing.Dict[str, int] = {}
    host = None
    for rp_uuid in sorted(allocations):
        host = host or names.get(rp_uuid)
        for rc, n in allocations[rp_uuid].items():
            resources[rc] = resources.get(rc, 0) + n
    if host is None:
        return None
    return repair_service.Server(sid, host, resources, project)


def _host(placement: pc.PlacementClient, rp: str, name: str
          ) -> planner.Host:
    """One compute node: its capacity left and its traits."""
    usages = placement.request(
        'GET', f'/resource_providers/{rp}/usages').json()['usages']
    free = {rc: stack_service.free_capacity(
        inv['total'], usages.get(rc, 0), inv.get('reserved', 0),
        inv.get('allocation_ratio', 1.0))
        for rc, inv in hosts_mod.inventories(placement, rp).items()}
    return planner.Host(name, free,
                        frozenset(hosts_mod.traits(placement, rp)), rp)


def _roots(providers: typing.Mapping[str, dict]) -> typing.List[str]:
    """The compute nodes: root providers."""
    return sorted(rp for rp, p in providers.items()
                  if p.get('root_provider_uuid', rp) == rp)


def _consumers(placement: pc.PlacementClient,
               providers: typing.Mapping[str, dict]) -> typing.Set[str]:
    """Every consumer with an allocation on a compute node."""
    found: typing.Set[str] = set()
    for rp in _roots(providers):
        found.update(placement.request(
            'GET', f'/resource_providers/{rp}/allocations'
        ).json()['allocations'])
    return found


def running(placement: pc.PlacementClient,
            providers: typing.Mapping[str, dict],
            names: typing.Mapping[str, str]
            ) -> typing.Dict[str, repair_service.Server]:
    """Every instance with an allocation on a compute node (one read of
    each compute node's allocations, then one of each instance's):
    instance -> its host, resources and project.

    :param providers: every resource provider, by uuid.
    :param names: provider uuid -> the name of the host it is part of.
    """
    return _servers(placement, _consumers(placement, providers), names,
                    instances_only=True)


def _hosts(placement: pc.PlacementClient,
           servers: typing.Iterable[repair_service.Server],
           providers: typing.Mapping[str, dict], every: bool = False
           ) -> typing.Tuple[planner.Host, ...]:
    """Every host that could take one of the servers, and theirs (with
    ``every``: every compute node, full ones too)."""
    found: typing.Dict[str, planner.Host] = {}
    if every:
        for rp in _roots(providers):
            name = providers[rp]['name']
            found[name] = _host(placement, rp, name)
    by_name = {p['name']: p for p in providers.values()}
    flavors = {tuple(sorted(s.resources.items())) for s in servers}
    for flavor in sorted(flavors):
        if not any(n for _, n in flavor):
            continue
        for rp, (free, traits) in hosts_mod.fitting(
                placement, dict(flavor)).items():
            name = providers.get(rp, {}).get('name', rp)
            found.setdefault(name, planner.Host(name, free, traits, rp))
    for server in servers:
        if server.host in found or server.host not in by_name:
            continue
        found[server.host] = _host(placement, by_name[server.host]['uuid'],
                                   server.host)
    return tuple(found[n] for n in sorted(found))


def _server_ids(groups: typing.Iterable[repair_service.Group],
                stacks: typing.Iterable[repair_service.Stack],
                asked: Asked, mine: bool) -> typing.Set[str]:
    """The servers of the groups and stacks asked for (``mine``), or of
    the others."""
    found = {s for g in groups
             if repair_service.chosen(asked, GROUP, g.id) == mine
             for s in g.members}
    found.update(s for st in stacks
                 if repair_service.chosen(asked, STACK, st.id) == mine
                 for s in st.instances.values())
    return found


def cloud(service, asked: Asked, wide: bool = False
          ) -> repair_service.Cloud:
    """The cloud a plan for ``asked`` reads.

    :param wide: every group and stack, every compute node and every
        instance on one (a server the plan may move to make room); else
        the groups and stacks asked for, their servers and the hosts that
        could take one of them.
    :raises nova_scoped_policies.errors.Unavailable: Placement or Nova failed.
    """
    try:
        topology = topologies.with_hosts(service.store, service.placement)
        groups, stacks = _groups_and_stacks(service, asked, wide)
        providers = {p['uuid']: p
                     for p in service.placement.list_providers()}
        names = {rp: p['name'] for rp, p in providers.items()}
        servers = _servers(service.placement,
                           _server_ids(groups, stacks, asked, True), names)
        if wide:
            servers.update(_servers(
                service.placement,
                (_consumers(service.placement, providers)
                 | _server_ids(groups, stacks, asked, False))
                - set(servers), names, instances_only=True))
        hosts = _hosts(service.placement, servers.values(), providers,
                       every=wide)
    except pc.PlacementError as exc:
        raise errors.Unavailable.placement('read the cloud for a repair', exc)
    return repair_service.Cloud(hosts, servers, groups, stacks, topology,
                                wide=wide)


def _refused(exc: Exception) -> webob.exc.HTTPException:
    """The repair service's refusal as an HTTP error."""
    if isinstance(exc, repair_service.Unreadable):
        return webob.exc.HTTPConflict(
            explanation=f'the stack cannot be read any more: {exc.reason}')
    return webob.exc.HTTPNotFound(explanation=str(exc))


def read(service, asked: Asked, project: str, admin: bool,
         wide: bool = False) -> Read:
    """The world a plan for ``asked`` reads, for a caller of ``project``
    (:func:`cloud`, assembled by the repair service).

    :raises webob.exc.HTTPNotFound: no such target of the caller's.
    :raises webob.exc.HTTPConflict: the stack asked for cannot be read.
    :raises nova_scoped_policies.errors.Unavailable: Placement or Nova failed.
    """
    try:
        return Read.of(repair_service.assemble(
            cloud(service, asked, wide), asked,
            repair_service.Who(project, admin)))
    except (repair_service.NotFound, repair_service.Unreadable) as exc:
        raise _refused(exc)


def plan(service, asked: Asked, project: str, admin: bool
         ) -> typing.Tuple[Read, planner.Plan]:
    """(the world read, its plan) by the repair service: the cloud read
    narrow, and wide (every instance a bystander the plan may move, every
    other group and stack kept) unless that is nothing to do or one
    move.

    :raises webob.exc.HTTPNotFound, HTTPConflict,
        nova_scoped_policies.errors.Unavailable: see :func:`read`.
    :raises solver.SolverUnavailable: OR-Tools is not installed.
    """
    try:
        found = repair_service.plan(
            lambda wide: cloud(service, asked, wide), asked,
            repair_service.Who(project, admin),
            service.conf.scoped_policies_api.repair_time_limit)
    except (repair_service.NotFound, repair_service.Unreadable) as exc:
        raise _refused(exc)
    return Read.of(found.assembled), found.plan


def others_moved(read: Read, moves: typing.Iterable[planner.Move],
                 project: str) -> typing.List[str]:
    """The servers of ``moves`` that are not ``project``'s."""
    return [m.server for m in moves
            if read.projects.get(m.server, '') != project]


def fingerprint(problem: planner.Problem,
                moves: typing.Iterable[planner.Move] = ()) -> str:
    """What a plan depends on besides capacity: the targets' documents
    and servers, where those servers run, and where each other server the
    plan moves runs, with the documents of its groups and stacks."""
    moved = {m.server for m in moves}
    mine = {s for t in problem.targets for s in t.servers}
    theirs = [t for t in problem.kept if t.servers & moved]
    body = []
    for target in problem.targets + tuple(theirs):
        body.append([target.kind, target.id, [
            [c.field, [str(p) for p in c.document.policies],
             c.document.rules.to_dict(),
             [list(p) for p in c.parts], list(c.fixed)]
            for c in target.clauses]])
    body.append(sorted((s.id, s.host) for s in problem.servers.values()
                       if s.id in mine or s.id in moved))
    return hashlib.sha256(jsonutils.dump_as_bytes(body)).hexdigest()


def viewed(read: Read, who: visibility.Viewer) -> Read:
    """The same world in what ``who`` may see: hosts as surrogates and
    domains in the viewer's identifiers (as the group audit shows them)
    for a tenant; unchanged for an admin. Violations computed on it name
    nothing else."""
    if who.real:
        return read
    problem = read.problem
    view, host = visibility.seen_topology(who, problem.topology)
    servers = {sid: dataclasses.replace(s, host=host(s.host))
               for sid, s in problem.servers.items()}
    hosts = tuple(dataclasses.replace(h, name=host(h.name), provider='')
                  for h in problem.hosts)
    # policies named as the viewer writes them (real ids underneath)
    targets = tuple(dataclasses.replace(t, clauses=tuple(
        dataclasses.replace(c, fixed=tuple(host(h) for h in c.fixed),
                            document=identifiers.worded(
                                c.document, problem.topology,
                                who.project_id))
        for c in t.clauses)) for t in problem.targets)
    return Read(planner.Problem(hosts, servers, targets, view),
                read.owners, read.names, host, read.projects)
