"""A group's or a stack's audit as one caller may see it.

The violations are computed on the caller's view of the placements, so
they name hosts and domains only by the identifiers shown; policies keep
their real identifiers and are named as the group's tenant writes them
(``identifiers.worded``). :func:`.views.audit` serialises the result.
"""

import dataclasses
import typing

import webob.exc

from nova_scoped_policies.api import hosts as hosts_mod
from nova_scoped_policies.api import repairs
from nova_scoped_policies.api import topologies
from nova_scoped_policies.api import visibility
from nova_scoped_policies.db import records
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.engine import audit as audit_mod
from nova_scoped_policies import errors
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies import identifiers
from nova_scoped_policies import policy
from nova_scoped_policies.stacks import live
from nova_scoped_policies.stacks import model as stack_model
from nova_scoped_policies.stacks.world import World
from nova_scoped_policies import topology as topo


@dataclasses.dataclass(frozen=True)
class GroupAudit:
    """The audit of one group for one viewer.

    :param group: the stored group.
    :param result: members, their domains (real ids) and violations (in
        the viewer's identifiers).
    :param shown: (scope, real id) -> what the viewer sees of it.
    """

    group: records.GroupRecord
    result: audit_mod.Audit
    shown: typing.Callable[[str, str], str]


def audit(record: records.GroupRecord, who: visibility.Viewer,
          topology: topo.Topology,
          hosts: typing.Mapping[str, typing.Optional[str]]) -> GroupAudit:
    """Audit a group's placements for ``who``.

    :param record: the stored group (policies with real identifiers).
    :param who: the viewer.
    :param topology: the stored scopes, with the hosts of members.
    :param hosts: member -> host.
    """
    document = identifiers.worded(record.document, topology,
                                  record.project_id)
    shown = visibility.shown_by(who, topology)
    view, host = visibility.seen_topology(who, topology, shown)
    view_hosts = {m: (host(h) if h else None) for m, h in hosts.items()}
    return GroupAudit(record, audit_mod.audit(document, view, view_hosts),
                      shown)


def where(record: stack_db.StackRecord,
          booted: typing.Mapping[str, typing.Optional[str]]
          ) -> typing.Dict[str, typing.Optional[str]]:
    """server name -> where it is: its instance's host for a booted
    server, its decided host while held, nowhere once released unbooted
    (or when its instance is gone).

    :param booted: instance uuid -> its host now.
    """
    found: typing.Dict[str, typing.Optional[str]] = {}
    for name, server in record.servers.items():
        if server.state == stack_db.HELD:
            found[name] = server.host
        elif server.instance_uuid:
            found[name] = booted.get(server.instance_uuid)
        else:
            found[name] = None
    return found


@dataclasses.dataclass(frozen=True)
class StackRead:
    """What a stack's audit reads (real identifiers).

    :param record: the decision.
    :param real: the same with real identifiers.
    :param topology: the stored scopes with their hosts.
    :param placed: server name -> where it is now (:func:`where`).
    :param servers: existing server -> host, of its relationships.
    :param groups: existing server group -> hosts, of its relationships.
    """

    record: stack_db.StackRecord
    real: stack_model.Stack
    topology: topo.Topology
    placed: typing.Mapping[str, typing.Optional[str]]
    servers: typing.Mapping[str, typing.Optional[str]]
    groups: typing.Mapping[str, typing.Tuple[str, ...]]


def read_stack(service, record: stack_db.StackRecord) -> StackRead:
    """Read where a stack's servers and the ends of its relationships are.

    :raises nova_scoped_policies.errors.Unavailable: Placement failed.
    :raises webob.exc.HTTPConflict: the stack names a scope that is gone.
    """
    parsed = stack_model.parse(record.document)
    try:
        topology = topologies.with_hosts(service.store, service.placement,
                                         parsed.scopes)
        real = stack_model.with_real_ids(parsed, topology,
                                         record.project_id)
        servers, groups = repairs.ends(service, real)
    except (stack_model.StackError, policy.PolicyError) as exc:
        raise webob.exc.HTTPConflict(
            explanation=f'the stack cannot be read any more: {exc}')
    except pc.PlacementError as exc:
        raise errors.Unavailable.placement('read the stack\'s hosts',
                                           exc) from exc
    booted = [s.instance_uuid for s in record.servers.values()
              if s.instance_uuid and s.state != stack_db.HELD]
    placed = where(record, hosts_mod.member_placements(
        service.placement, booted).hosts)
    return StackRead(record, real, topology, placed, servers,
                     groups)


def stack(found: StackRead, who: visibility.Viewer) -> live.StackAudit:
    """A stack's audit for ``who``: each of its documents (a group's
    policies, the policies across a group of groups, a relationship)
    with the verdicts of the policies' own plugins, over where its
    servers are now. Computed on the viewer's view: a tenant's
    violations name hosts by surrogates and domains by its identifiers.
    """
    view, host = visibility.seen_topology(who, found.topology)

    def seen(h: typing.Optional[str]) -> typing.Optional[str]:
        return host(h) if h else None
    # the view keeps the domains' real ids (only their names are the
    # viewer's): audit the real-id document, its policies named as the
    # viewer writes them
    document = found.real if who.real else stack_model.with_leaves(
        found.real, lambda d: identifiers.worded(d, found.topology,
                                                 who.project_id))
    return live.audit(document, World(
        (), view, {u: seen(h) for u, h in found.servers.items()},
        {g: tuple(host(h) for h in hs) for g, hs in found.groups.items()}),
        {n: seen(h) for n, h in found.placed.items()})
