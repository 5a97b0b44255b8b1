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
  /allocations/{consumer}``: its type and project).
* The policy store: scopes, groups (their members added here and
  excluded), stacks.
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
import typing

import webob.exc

from nova_scoped_policies.api import hosts as hosts_mod
from nova_scoped_policies.api import repairs
from nova_scoped_policies.api import topologies
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.engine import forbidden_aggregates
from nova_scoped_policies import export
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies import policy
from nova_scoped_policies.repair import service as repair_service
from nova_scoped_policies import topology as topo
from nova_scoped_policies.topology.model import LICENSE_KEY

METADATA = (forbidden_aggregates.TRAIT_PREFIX, LICENSE_KEY)
"""Aggregate metadata the scheduler reads besides scopes."""
ASSOCIATED_TRAITS = '/traits?associated=true'
"""The traits some provider has."""

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
            found_inv = export.Inventory(inv['total'],
                                         inv.get('reserved', 0),
                                         inv.get('allocation_ratio', 1.0))
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
             ) -> typing.Dict[str, repair_service.Server]:
    """Every instance with an allocation on a compute node: instance ->
    its host, resources and project. Nova's servers are instances of
    Nova's project; any other consumer is read on its own for its type
    and project (:func:`.repairs.consumer`)."""
    allocations = _allocations(placement, each, providers, roots)
    found: typing.Dict[str, repair_service.Server] = {}
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
    for uuid, server in zip(others, each(
            lambda c: repairs.consumer(placement, c, names,
                                       instances_only=True), others)):
        if server is not None:
            found[uuid] = server
    return found


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

    :raises webob.exc.HTTPServiceUnavailable: Placement or Nova failed.
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
            running = _running(placement, pool.map, providers, roots,
                               names, nova_servers)
    except pc.PlacementError as exc:
        raise webob.exc.HTTPServiceUnavailable(
            explanation=f'cannot read the cloud for an export: Placement '
            f'answered {exc}')
    groups, member_of = _groups(service, nova_groups)
    servers = []
    for uuid, found in sorted(running.items()):
        nova_server = nova_servers.get(uuid, {})
        servers.append(export.Server(
            uuid, nova_server.get('name') or uuid, found.host,
            nova_server.get('tenant_id') or found.project,
            dict(found.resources), member_of.get(uuid)))
    stacks = [export.Stack(r.id, r.name, r.project_id, r.document)
              for r in stack_db.StackStore(service.store).list()]
    return export.Cloud(scopes, tuple(hosts),
                        tuple(_aggregates(scopes, topology,
                                          nova_aggregates)),
                        tuple(servers), tuple(groups), tuple(stacks))
