"""What a stack decision reads from Placement and the store.

* Hosts and their free capacity: one ``GET /allocation_candidates`` per
  distinct flavor of the stack (with its traits), whose provider summaries
  give every fitting provider's capacity (allocation ratio and reserved
  applied), usage and traits, plus one ``GET /resource_providers`` for the
  names. Hosts that fit no flavor of the stack never enter the model.
* Domains: the stored scopes the stack names, one ``GET
  /resource_providers?member_of=in:AGG`` per aggregate of those scopes.
* Existing servers of relationships: their allocations (consumer = the
  instance), which also say whose they are: another project's server or
  group is answered as missing, never named.

The request's deadline is read between these reads: past it, the rest is
not read (the service then answers that no decision was found within the
limit). One call is never cut short: ``connect_timeout`` and
``read_timeout`` bound each.
"""

import typing

import webob.exc

from nova_scoped_policies.api import hosts as hosts_mod
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import records
from nova_scoped_policies import errors
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.stacks.deadline import Deadline
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver
from nova_scoped_policies import topology as topo


class _Late(Exception):
    """The deadline passed between two reads."""


def _on_time(deadline: typing.Optional[Deadline]) -> None:
    if deadline is not None and deadline.past():
        raise _Late()


def _hosts(placement: pc.PlacementClient, stack: model.Stack,
           deadline: typing.Optional[Deadline] = None
           ) -> typing.Tuple[typing.List[solver.HostState],
                             typing.Dict[str, str]]:
    names = {p['uuid']: p['name'] for p in placement.list_providers()}
    found: typing.Dict[str, solver.HostState] = {}
    for flavor in sorted({s.flavor for s in stack.servers}, key=repr):
        _on_time(deadline)
        required = sorted(flavor.required) + [
            f'!{t}' for t in sorted(flavor.forbidden)]
        for rp, (free, traits) in hosts_mod.fitting(
                placement, flavor.resources, required).items():
            found.setdefault(rp, solver.HostState(names.get(rp, rp), rp,
                                                  free, traits))
    return list(found.values()), {rp: name for rp, name in names.items()}


def _topology(placement: pc.PlacementClient,
              scope_records: typing.List[records.ScopeRecord],
              stack: model.Stack,
              deadline: typing.Optional[Deadline] = None) -> topo.Topology:
    wanted = stack.scopes
    parents = {r.name: r.parent for r in scope_records}
    for name in list(wanted):   # nesting is checked against the parents
        while parents.get(name):
            name = parents[name]
            wanted = wanted | {name}
    by_aggregate = {}
    for record in scope_records:
        if record.name in wanted:
            for aggregate in record.aggregates:
                _on_time(deadline)
                by_aggregate[aggregate] = hosts_mod.hosts_in(placement,
                                                             [aggregate])
    return topo.from_scope_records(scope_records, by_aggregate)


def _where(placement: pc.PlacementClient, consumer: str,
           names: typing.Mapping[str, str]
           ) -> typing.Tuple[typing.Optional[str], typing.Optional[str]]:
    """(host, project) of an instance from its allocations."""
    data = placement.request('GET', f'/allocations/{consumer}',
                             version='1.12').json()
    host = next((names.get(rp, rp) for rp in sorted(data['allocations'])),
                None)
    return host, data.get('project_id')


def existing(service, stack: model.Stack, project_id: str, admin: bool,
             names: typing.Mapping[str, str]
             ) -> typing.Tuple[typing.Dict[str, typing.Optional[str]],
                               typing.Dict[str, typing.Tuple[str, ...]]]:
    """servers and server_groups of the relationships: uuid -> host(s).

    :raises webob.exc.HTTPBadRequest: naming the field, for one that does
        not exist or is not the caller's.
    """
    servers: typing.Dict[str, typing.Optional[str]] = {}
    groups: typing.Dict[str, typing.Tuple[str, ...]] = {}
    placement = service.placement
    for rel in stack.relationships:
        target = rel.target
        if not isinstance(target, model.Existing):
            continue
        field = f'{rel.field}.to.{target.kind}'
        missing = webob.exc.HTTPBadRequest(
            explanation=f'{field}: no such {target.kind.replace("_", " ")}')
        if target.kind == 'server':
            host, owner = _where(placement, target.uuid, names)
            if host is None or (owner != project_id and not admin):
                raise missing
            servers[target.uuid] = host
            continue
        owner = None
        try:
            record = service.store.get_group(target.uuid)
            owner = record.project_id
        except store_api.NotFound:   # maybe a plain Nova group
            record = None
        booted: typing.List[str] = []
        if service.nova is not None:
            nova_group = service.nova.group(target.uuid)
            if nova_group is not None:
                owner = owner or nova_group.get('project_id')
                booted = list(nova_group.get('members', ()))
        # without the members taken out of its scoped policies
        members = list(record.counted(booted)) if record else booted
        if owner is None or (owner != project_id and not admin):
            raise missing
        hosts = []
        for member in members:
            host, _ = _where(placement, member, names)
            if host:
                hosts.append(host)
        groups[target.uuid] = tuple(hosts)
    return servers, groups


def build(service, stack: model.Stack, project_id: str,
          admin: bool, deadline: typing.Optional[Deadline] = None
          ) -> solver.World:
    """The world a decision for ``stack`` reads: the hosts, the domains
    and the existing servers, each read before ``deadline``; past it, the
    rest is not read and the world is empty (the caller sees the deadline
    past and decides nothing).

    :raises nova_scoped_policies.errors.Unavailable: Placement failed.
    :raises webob.exc.HTTPBadRequest: a relationship names a server or
        group the caller may not use.
    """
    placement = service.placement
    try:
        hosts, names = _hosts(placement, stack, deadline)
        topology = _topology(placement, service.store.list_scopes(), stack,
                             deadline)
        _on_time(deadline)
        servers, groups = existing(service, stack, project_id, admin, names)
    except pc.PlacementError as exc:
        raise errors.Unavailable.placement('read the cloud\'s capacity', exc)
    except _Late:
        return solver.World((), topo.Topology([], []))
    return solver.World(tuple(hosts), topology, servers, groups)
