"""What ``GET /export`` reads (microversion 1.5): the live cloud as the
records of :mod:`nova_scoped_policies.export`, which writes the scenario.

The reads, each a bounded number of calls whatever the number of
servers:

* Placement: ``GET /resource_providers`` once (Placement does not page
  it); per resource provider (compute nodes and their nested providers)
  its inventories and its allocations (``GET /resource_providers/{uuid}/
  allocations``: every consumer on it with what it takes, so a server's
  host and resources come from the providers' reads, not one read per
  server); ``GET /traits?associated=true`` and, per trait found, the
  providers that have it (``GET /resource_providers?required=T``); the
  hosts of each stored scope's aggregates (:func:`.topologies.
  with_hosts`, one ``member_of`` listing per aggregate). Only a consumer
  Nova does not list as a server (a stack's hold, a migration, every
  consumer without ``[nova]``) is read on its own (``GET
  /allocations/{consumer}``: its type and project); a hold is capacity
  held (:class:`.export.Hold`), a migration nothing.
* The policy store: scopes, groups (their members added here and
  excluded), stacks (and the servers whose holds each still has).
* nova-scheduler's options (:func:`scheduler_config`): the files of
  ``[scoped_policies_api] scheduler_config_files``, read once.
* Nova, with ``[nova]`` configured (:class:`.nova.NovaGroups`): every
  server (``limit``/``marker`` pages, ``all_tenants``) for its name and
  project, every server group (``limit``/``offset`` pages,
  ``all_projects``) for the members Nova booted into it and for plain
  Nova groups' policies, and the host aggregates (one call) for their
  names and the metadata the scheduler reads (``trait:`` of forbidden
  aggregates, ``license:``). Without it servers and aggregates are named
  by their uuids and groups count only the members added here.

An export of P providers, T traits in use and A aggregates costs about
2P + T + A calls to Placement, made ``[scoped_policies_api]
export_workers`` at a time (a thread pool). What is read is sorted
before the scenario is built: the same cloud, the same export, whatever
order the answers come in.
"""

import concurrent.futures
import dataclasses
import os
import typing

from oslo_config import cfg
from nova_scoped_policies.api import hosts as hosts_mod
from nova_scoped_policies.api import repairs
from nova_scoped_policies.api import topologies
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.engine import forbidden_aggregates
from nova_scoped_policies import errors
from nova_scoped_policies import export
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import holds
from nova_scoped_policies import policy
from nova_scoped_policies.repair import service as repair_service
from nova_scoped_policies import topology as topo
from nova_scoped_policies.topology.model import LICENSE_KEY

METADATA = (forbidden_aggregates.TRAIT_PREFIX, LICENSE_KEY)
"""Aggregate metadata the scheduler reads besides scopes."""
ASSOCIATED_TRAITS = '/traits?associated=true'
"""The traits some provider has."""

INVENTORY_FIELDS = frozenset(
    f.name for f in dataclasses.fields(export.Inventory))
"""What the export keeps of an inventory Placement returns."""

Each = typing.Callable[..., typing.Iterator]
"""How a read per item is made: ``map``, or a thread pool's ``map``
(answers in the items' order either way)."""


def _inventories(placement: pc.PlacementClient, each: Each,
                 providers: typing.Mapping[str, dict],
                 roots: typing.Mapping[str, str]
                 ) -> typing.Dict[str, typing.Dict[str, export.Inventory]]:
    """Root provider -> the inventories of its tree (one read per
    provider)."""
    order = sorted(providers)
    trees: typing.Dict[str, typing.Dict[str, export.Inventory]] = {}
    for rp, found in zip(order, each(
            lambda rp: hosts_mod.inventories(placement, rp), order)):
        tree = trees.setdefault(roots[rp], {})
        for rc, inv in found.items():
            found_inv = export.Inventory(**{
                k: v for k, v in inv.items()
                if k in INVENTORY_FIELDS})
            tree[rc] = tree[rc].plus(found_inv) if rc in tree else found_inv
    return trees


def _traits(placement: pc.PlacementClient, each: Each,
            roots: typing.AbstractSet[str]
            ) -> typing.Dict[str, typing.Tuple[str, ...]]:
    """Root provider -> its traits: one read of the traits in use, then
    one listing of the providers of each."""
    names = sorted(placement.request('GET', ASSOCIATED_TRAITS).json()[
        'traits'])
    found: typing.Dict[str, typing.List[str]] = {rp: [] for rp in roots}
    for trait, listed in zip(names, each(
            lambda t: placement.list_providers(required=[t]), names)):
        for provider in listed:
            if provider['uuid'] in found:
                found[provider['uuid']].append(trait)
    return {rp: tuple(sorted(traits)) for rp, traits in found.items()}


def _hosts(placement: pc.PlacementClient, each: Each,
           providers: typing.Mapping[str, dict],
           roots: typing.Mapping[str, str]) -> typing.List[export.Host]:
    """Every compute node with the inventories of its tree and its
    traits."""
    trees = _inventories(placement, each, providers, roots)
    traits = _traits(placement, each,
                     {root for root in trees if root in providers})
    return [export.Host(providers[root]['name'], tree, traits[root])
            for root, tree in sorted(trees.items())
            if root in providers]


def _allocations(placement: pc.PlacementClient, each: Each,
                 providers: typing.Mapping[str, dict],
                 roots: typing.Mapping[str, str]
                 ) -> typing.Dict[str, typing.Dict[str,
                                                   typing.Dict[str, int]]]:
    """Consumer -> provider -> what it takes there, for every consumer
    with an allocation on a compute node (one read per provider)."""
    order = sorted(providers)
    found: typing.Dict[str, typing.Dict[str, typing.Dict[str, int]]] = {}
    on_root: typing.Set[str] = set()
    for rp, listed in zip(order, each(
            lambda rp: placement.request(
                'GET', f'/resource_providers/{rp}/allocations'
            ).json()['allocations'], order)):
        for consumer, data in listed.items():
            found.setdefault(consumer, {})[rp] = data['resources']
            if roots[rp] == rp:
                on_root.add(consumer)
    return {c: found[c] for c in on_root}


def _running(placement: pc.PlacementClient, each: Each,
             providers: typing.Mapping[str, dict],
             roots: typing.Mapping[str, str],
             names: typing.Mapping[str, str],
             nova_servers: typing.Mapping[str, dict]
             ) -> typing.Tuple[typing.Dict[str, repair_service.Server],
                               typing.Dict[str, repair_service.Server]]:
    """(instance -> its host, resources and project, for every instance
    with an allocation on a compute node; hold consumer -> the same, for
    every stack's hold). Nova's servers are instances of Nova's project;
    any other consumer is read on its own for its type and project
    (:func:`_consumer`)."""
    allocations = _allocations(placement, each, providers, roots)
    found: typing.Dict[str, repair_service.Server] = {}
    held: typing.Dict[str, repair_service.Server] = {}
    others = []
    for uuid, data in allocations.items():
        if uuid not in nova_servers:
            others.append(uuid)
            continue
        server = repairs.server(uuid, data, names,
                                nova_servers[uuid].get('tenant_id') or '')
        if server is not None:
            found[uuid] = server
    others.sort()
    for uuid, (kind, project) in zip(others, each(
            lambda c: _consumer(placement, c), others)):
        if kind == 'MIGRATION':
            continue    # the source side of a move: no server
        server = repairs.server(uuid, allocations[uuid], names, project)
        if server is not None:
            (held if kind == holds.CONSUMER_TYPE else found)[uuid] = server
    return found, held


def _consumer(placement: pc.PlacementClient, consumer: str
              ) -> typing.Tuple[str, str]:
    """A consumer's type and project (one ``GET /allocations/{consumer}``
    at the microversion that names its type)."""
    body = placement.request('GET', f'/allocations/{consumer}',
                             version=repairs.CONSUMER_TYPES).json()
    return body.get('consumer_type') or '', body.get('project_id') or ''


def _holds(held: typing.Mapping[str, repair_service.Server],
           stacks: typing.Sequence[typing.Any]) -> typing.List[export.Hold]:
    """Every hold, with the stack and server it is held for where a
    stored stack still holds it."""
    held_for = {consumer: (record.id, server)
                for record in stacks
                for server, consumer in record.held.items()}
    return [export.Hold(uuid, found.host, found.project,
                        dict(found.resources),
                        *held_for.get(uuid, (None, None)))
            for uuid, found in sorted(held.items())]


def _aggregates(scopes, topology: topo.Topology,
                nova_aggregates: typing.Sequence[dict]
                ) -> typing.List[export.Aggregate]:
    """The stored scopes' aggregates (hosts from Placement) and Nova's
    aggregates with metadata the scheduler reads."""
    by_uuid = {a['uuid']: a for a in nova_aggregates}
    found = {}
    for record in scopes:
        for domain in topology.domains(record.name):
            nova = by_uuid.get(domain.id, {})
            found[domain.id] = export.Aggregate(
                domain.id, nova.get('name') or domain.id,
                tuple(sorted(domain.hosts)), record.name,
                _metadata(nova))
    for agg in nova_aggregates:
        metadata = _metadata(agg)
        if metadata and agg['uuid'] not in found:
            found[agg['uuid']] = export.Aggregate(
                agg['uuid'], agg.get('name') or agg['uuid'],
                tuple(sorted(agg.get('hosts') or ())), None, metadata)
    return list(found.values())


def _metadata(aggregate: typing.Mapping[str, typing.Any]
              ) -> typing.Dict[str, str]:
    return {k: str(v) for k, v in (aggregate.get('metadata') or {}).items()
            if k.startswith(METADATA)}


def _groups(service, nova_groups: typing.Mapping[str, dict]
            ) -> typing.Tuple[typing.List[export.Group],
                              typing.Dict[str, str]]:
    """(every group with policies, member -> its group): the stored
    groups with the members they count (Nova's too), and plain Nova
    groups with Nova's policy."""
    groups, member_of = [], {}
    for record in service.store.list_groups():
        nova = nova_groups.get(record.uuid, {})
        groups.append(export.Group(
            record.uuid, record.name or nova.get('name') or record.uuid,
            record.project_id, record.document))
        for member in record.counted(nova.get('members') or ()):
            member_of[member] = record.uuid
    stored = {g.uuid for g in groups}
    for uuid, nova in sorted(nova_groups.items()):
        if uuid in stored:
            continue
        document = policy.from_nova_group(nova.get('policy'),
                                          nova.get('rules'))
        if document.empty:
            continue
        groups.append(export.Group(uuid, nova.get('name') or uuid,
                                   nova.get('project_id', ''), document))
        for member in nova.get('members') or ():
            member_of.setdefault(member, uuid)
    return groups, member_of


def read(service) -> export.Cloud:
    """The cloud as it runs.

    :raises nova_scoped_policies.errors.Unavailable: Placement or Nova failed.
    """
    placement = service.placement
    nova = service.nova
    nova_servers: typing.Dict[str, dict] = {}
    nova_groups: typing.Dict[str, dict] = {}
    nova_aggregates: typing.List[dict] = []
    if nova is not None:
        nova_servers = {s['id']: s for s in nova.all_servers()}
        nova_groups = {g['id']: g for g in nova.all_groups()}
        nova_aggregates = nova.aggregates()
    scopes = tuple(service.store.list_scopes())
    workers = service.conf.scoped_policies_api.export_workers
    placement.keep_connections(workers)
    try:
        with concurrent.futures.ThreadPoolExecutor(
                workers, thread_name_prefix='export') as pool:
            topology = topologies.with_hosts(service.store, placement,
                                             each=pool.map)
            providers = {p['uuid']: p for p in placement.list_providers()}
            roots = {rp: p.get('root_provider_uuid') or rp
                     for rp, p in providers.items()}
            names = {rp: providers.get(root, providers[rp])['name']
                     for rp, root in roots.items()}
            hosts = _hosts(placement, pool.map, providers, roots)
            running, held = _running(placement, pool.map, providers, roots,
                                     names, nova_servers)
    except pc.PlacementError as exc:
        raise errors.Unavailable.placement('read the cloud for an export',
                                           exc) from exc
    groups, member_of = _groups(service, nova_groups)
    servers = []
    for uuid, found in sorted(running.items()):
        nova_server = nova_servers.get(uuid, {})
        servers.append(export.Server(
            uuid, nova_server.get('name') or uuid, found.host,
            nova_server.get('tenant_id') or found.project,
            dict(found.resources), member_of.get(uuid)))
    stack_records = stack_db.StackStore(service.store).list()
    stacks = [export.Stack(r.id, r.name, r.project_id, r.document)
              for r in stack_records]
    return export.Cloud(scopes, tuple(hosts),
                        tuple(_aggregates(scopes, topology,
                                          nova_aggregates)),
                        tuple(servers), tuple(groups), tuple(stacks),
                        tuple(_holds(held, stack_records)),
                        scheduler_config(service.conf))


FILTER_SCHEDULER = 'filter_scheduler'


def scheduler_config(conf: cfg.ConfigOpts) -> export.Config:
    """nova-scheduler's options that shape a decision: from the files of
    ``[scoped_policies_api] scheduler_config_files``, read as
    nova-scheduler reads them (our ``[scoped_policies]`` and, typed by
    nova's options where nova is installed, else as written, nova's
    ``[filter_scheduler]``); without them, this service's own
    ``[scoped_policies]`` and no ``[filter_scheduler]``.

    :raises nova_scoped_policies.errors.Unavailable: a file cannot be read.
    """
    files = conf.scoped_policies_api.scheduler_config_files
    if not files:
        return export.Config(_ours(conf))
    scheduler = cfg.ConfigOpts()
    # a group of its own: a module's OptGroup, registered on two
    # ConfigOpts, shares its options' overrides between them
    scheduler.register_group(cfg.OptGroup(sched_conf.GROUP_NAME))
    sched_conf.register_opts(scheduler)
    nova = _nova_options()
    if nova is not None:
        scheduler.register_opts(nova, group=FILTER_SCHEDULER)
    try:
        scheduler(args=[], project='nova', use_env=False,
                  default_config_files=[f for f in files
                                        if not os.path.isdir(f)],
                  default_config_dirs=[f for f in files
                                       if os.path.isdir(f)])
        ours = _ours(scheduler)
        if nova is not None:
            section = scheduler[FILTER_SCHEDULER]
            theirs = {opt.dest: section[opt.dest] for opt in nova}
        else:
            theirs = _as_written(files, FILTER_SCHEDULER)
    except (cfg.Error, OSError) as exc:
        raise errors.Unavailable(
            'cannot read nova-scheduler\'s options '
            f'([scoped_policies_api] scheduler_config_files): {exc}'
        ) from exc
    return export.Config(ours, theirs)


def _ours(conf: cfg.ConfigOpts) -> typing.Dict[str, typing.Any]:
    section = conf[sched_conf.GROUP_NAME]
    return {name: section[name] for name in export.DECISION_OPTIONS}


def _nova_options() -> typing.Optional[typing.List[cfg.Opt]]:
    """nova's ``[filter_scheduler]`` options, or None where nova is not
    installed beside this service."""
    try:
        from nova.conf import scheduler as nova_conf
    except ImportError:
        return None
    return list(nova_conf.filter_scheduler_opts)


def _as_written(files: typing.Sequence[str], group: str
                ) -> typing.Dict[str, typing.Any]:
    """A section's values as the files write them (the last file that
    sets an option wins; an option set on several lines, a multi-valued
    one, is a list), for the simulator to type."""
    paths = []
    for path in files:
        paths += sorted(os.path.join(path, f) for f in os.listdir(path)
                        if f.endswith('.conf')) if os.path.isdir(path) \
            else [path]
    found: typing.Dict[str, typing.Any] = {}
    for path in paths:
        sections: typing.Dict[str, typing.Dict[str, list]] = {}
        cfg.ConfigParser(path, sections).parse()
        for key, values in sections.get(group, {}).items():
            found[key] = values[0] if len(values) == 1 else list(values)
    return found
