"""What each caller sees: real ids for admins, tenant ids otherwise.

scoped-policies.rst: an administrator sees real aggregate uuids and host
names; a tenant sees the identifiers of identifiable scopes in its own form
(obfuscated per tenant when the scope says so) and, in audits, ephemeral
surrogates for everything else. An administrator passes ``as_tenant_id``
to see a tenant's view.
"""

import dataclasses
import typing
import uuid as uuidlib

import webob

from nova_scoped_policies.api.policies import scopes as scope_rules
from nova_scoped_policies.api import util
from nova_scoped_policies.engine import audit as audit_mod
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies import topology as topo


@dataclasses.dataclass(frozen=True)
class Viewer:
    """Who a response is rendered for.

    :param real: show real aggregate uuids and host names.
    :param project_id: the project whose identifiers to show otherwise.
    """

    real: bool
    project_id: typing.Optional[str]


def viewer(req: webob.Request) -> Viewer:
    """The viewer of a request (``as_tenant_id`` needs admin)."""
    context = req.environ[util.CONTEXT]
    as_tenant = req.GET.get('as_tenant_id')
    if as_tenant is not None:
        context.can(scope_rules.REAL_IDS)
        if not as_tenant or len(as_tenant) > 255:
            raise webob.exc.HTTPBadRequest(
                explanation='as_tenant_id: must be a project id')
        return Viewer(False, as_tenant)
    return Viewer(context.can(scope_rules.REAL_IDS, fatal=False),
                  context.project_id)


def _time(value) -> typing.Optional[str]:
    return value.isoformat() if value is not None else None


def scope(record: dict, who: Viewer) -> dict:
    """A scope as ``who`` sees it.

    Tenants see the domains only of scopes that allow identifiers, in
    their own form; never the namespace.
    """
    out = {'uuid': record['uuid'], 'name': record['name'],
           'allow_identifiers': record['allow_identifiers'],
           'obfuscate_identifiers': record['obfuscate_identifiers'],
           'created_at': _time(record['created_at']),
           'updated_at': _time(record['updated_at'])}
    if who.real:
        out['obfuscate_namespace_uuid'] = record['obfuscate_namespace_uuid']
        out['aggregates'] = list(record['aggregates'])
    elif record['allow_identifiers']:
        one = topo.build([topo.scope_from_record(record)])
        out['aggregates'] = sorted(
            one.identifier_for(record['name'], a, who.project_id)
            for a in record['aggregates'])
    return out


def scopes_topology(records: typing.Iterable[dict],
                    hosts: typing.Mapping[str, typing.Iterable[str]] = {}
                    ) -> topo.Topology:
    """The stored scopes as a Topology.

    :param records: scope records of the store.
    :param hosts: aggregate -> the hosts of it that matter (audits).
    """
    return topo.from_scope_records(records, hosts)


def group(record: dict, who: Viewer, topology: topo.Topology) -> dict:
    """A scoped group as ``who`` sees it (policies in its identifiers)."""
    document = record['document']
    if not who.real:
        document = topology.to_tenant(document, who.project_id)
    body = document.to_dict()
    return {'id': record['uuid'], 'name': record['name'],
            'project_id': record['project_id'],
            'user_id': record['user_id'],
            'policies': body['policies'], 'rules': body['rules'],
            'members': list(record['members']), 'metadata': {},
            'created_at': _time(record['created_at']),
            'updated_at': _time(record['updated_at'])}


class Surrogates(dict):
    """real id -> random uuid, made on first use, for one response."""

    def __missing__(self, key):
        value = self[key] = str(uuidlib.uuid4())
        return value


def audit(record: dict, who: Viewer, topology: topo.Topology,
          hosts: typing.Mapping[str, typing.Optional[str]]) -> dict:
    """The audit of a group as ``who`` sees it.

    The violations are computed on the caller's view of the placements,
    so they name hosts and domains only by the identifiers shown.

    :param record: the stored group (policies with real identifiers).
    :param who: the viewer.
    :param topology: the stored scopes, with the hosts of members.
    :param hosts: member -> host.
    """
    document = topology.to_tenant(record['document'], record['project_id'])
    surrogates: typing.Dict[str, Surrogates] = {}

    def shown(scope: str, real: str) -> str:
        if who.real:
            return real
        sc = topology.scope(scope)
        if scope != HOST_SCOPE and sc is not None and sc.allow_identifiers:
            return topology.identifier_for(scope, real, who.project_id)
        return surrogates.setdefault(scope, Surrogates())[real]

    view_hosts = {m: (shown(HOST_SCOPE, h) if h else None)
                  for m, h in hosts.items()}
    domains = []
    for name in topology.scope_names:
        for d in topology.domains(name):
            domains.append(topo.Domain(
                d.id, shown(name, d.id), name,
                frozenset(shown(HOST_SCOPE, h) for h in d.hosts)))
    view = topo.build([topology.scope(n) for n in topology.scope_names],
                      domains)
    result = audit_mod.audit(document, view, view_hosts,
                             project_id=record['project_id'])
    members = []
    for placed in result.members:
        placements = {}
        for scope_name, found in sorted(placed.domains.items()):
            if scope_name == HOST_SCOPE:
                placements[scope_name] = placed.host
            elif found is None:
                placements[scope_name] = None
            else:
                placements[scope_name] = ','.join(
                    shown(scope_name, d) for d in found.split(','))
        members.append({'instance_id': placed.member,
                        'placements': placements})
    return {'server_group_policy_audit': {
        'server_group_id': record['uuid'],
        'members': members,
        'violations': list(result.violations)}}
