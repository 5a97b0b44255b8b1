"""What ``GET /export`` reads (microversion 1.5): the live cloud as the
records of :mod:`nova_scoped_policies.export`, which writes the scenario.

The readers are the audit's and the repair's:

* Placement: ``GET /resource_providers`` once (Placement does not page
  it); per compute node (and per nested provider) its inventories, and
  its traits (:func:`.hosts.inventories`, :func:`.hosts.traits`); the
  instances on each compute node and each instance's allocations
  (:func:`.repairs.running`: host, resources and project, exact); the
  hosts of each stored scope's aggregates (:func:`.topologies.
  with_hosts`, one ``member_of`` listing per aggregate).
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

Calls are made one at a time: an export of N compute nodes and S
servers costs about 3N + S + (aggregates) calls to Placement.
"""

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
from nova_scoped_policies import topology as topo
from nova_scoped_policies.topology.model import LICENSE_KEY

METADATA = (forbidden_aggregates.TRAIT_PREFIX, LICENSE_KEY)
"""Aggregate metadata the scheduler reads besides scopes."""


def _hosts(placement: pc.PlacementClient,
           providers: typing.Mapping[str, dict],
           roots: typing.Mapping[str, str]) -> typing.List[export.Host]:
    """Every compute node with the inventories of its tree and its
    traits."""
    inventories: typing.Dict[str, typing.Dict[str, export.Inventory]] = {}
    for rp in sorted(providers):
        tree = inventories.setdefault(roots[rp], {})
        for rc, inv in hosts_mod.inventories(placement, rp).items():
            found = export.Inventory(inv['total'], inv.get('reserved', 0),
                                     inv.get('allocation_ratio', 1.0))
            tree[rc] = tree[rc].plus(found) if rc in tree else found
    return [export.Host(providers[root]['name'], tree,
                        tuple(sorted(hosts_mod.traits(placement, root))))
            for root, tree in sorted(inventories.items())
            if root in providers]


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
    try:
        topology = topologies.with_hosts(service.store, placement)
        providers = {p['uuid']: p for p in placement.list_providers()}
        roots = {rp: p.get('root_provider_uuid') or rp
                 for rp, p in providers.items()}
        names = {rp: providers.get(root, providers[rp])['name']
                 for rp, root in roots.items()}
        hosts = _hosts(placement, providers, roots)
        running = repairs.running(placement, providers, names)
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
