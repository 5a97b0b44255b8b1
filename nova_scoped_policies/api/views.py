"""Serialisers: stored records and audits as the JSON bodies callers see.

Who sees what is decided in :mod:`.visibility`; the audit runs in
:mod:`.audit`; topologies are built in :mod:`.topologies`. This module
only turns their results into response bodies.
"""

import typing

from nova_scoped_policies.api import audit as audit_mod
from nova_scoped_policies.api import visibility
from nova_scoped_policies.db import records
from nova_scoped_policies import identifiers
from nova_scoped_policies import policy
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies import topology as topo


def _time(value) -> typing.Optional[str]:
    return value.isoformat() if value is not None else None


def scope(record: records.ScopeRecord, who: visibility.Viewer) -> dict:
    """A scope as ``who`` sees it.

    Tenants see the domains only of scopes that allow identifiers, in
    their own form; never the namespace.
    """
    out = {'uuid': record.uuid, 'name': record.name,
           'allow_identifiers': record.allow_identifiers,
           'obfuscate_identifiers': record.obfuscate_identifiers,
           'created_at': _time(record.created_at),
           'updated_at': _time(record.updated_at)}
    if who.real:
        out['obfuscate_namespace_uuid'] = record.obfuscate_namespace_uuid
        out['aggregates'] = list(record.aggregates)
    elif record.allow_identifiers:
        one = topo.build([topo.scope_from_record(record)])
        out['aggregates'] = sorted(
            one.identifier_for(record.name, a, who.project_id)
            for a in record.aggregates)
    return out


def group(record: records.GroupRecord, who: visibility.Viewer,
          topology: topo.Topology, objects: bool = False) -> dict:
    """A scoped group as ``who`` sees it (policies in its identifiers).

    ``members`` are those added through the API; ``excluded_members``
    those Nova booted into the group and ``remove_instance`` took out of
    its scoped policies (the scheduler reads both). Only the group's
    project and administrators see a group, so its instance ids.
    """
    document = record.document
    if not who.real:
        document = identifiers.to_tenant(document, topology, who.project_id)
    body = document.to_dict()
    found = {'id': record.uuid, 'name': record.name,
             'project_id': record.project_id,
             'user_id': record.user_id,
             'policies': body['policies'], 'rules': body['rules'],
             'members': list(record.members),
             'excluded_members': list(record.excluded), 'metadata': {},
             'created_at': _time(record.created_at),
             'updated_at': _time(record.updated_at)}
    if objects:
        # complex-anti-affinity.rst's form (microversion 1.3)
        del found['policies'], found['rules'], found['metadata']
        found['policy'] = policy.as_objects(document)
    return found


def audit(found: audit_mod.GroupAudit) -> dict:
    """The body of a group's audit (see :func:`.audit.audit`)."""
    shown = found.shown
    members = []
    for placed in found.result.members:
        placements = {}
        for scope_name, domains in sorted(placed.domains.items()):
            if scope_name == HOST_SCOPE:
                placements[scope_name] = placed.host
            elif domains is None:
                placements[scope_name] = None
            else:
                placements[scope_name] = ','.join(
                    shown(scope_name, d) for d in domains.split(','))
        members.append({'instance_id': placed.member,
                        'placements': placements})
    return {'server_group_policy_audit': {
        'server_group_id': found.group.uuid,
        'members': members,
        'violations': list(found.result.violations)}}
