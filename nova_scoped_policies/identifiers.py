"""Tenant identifiers of domains, translated once at the edges.

A tenant targets a domain (``affinity:zone:ID``) by the identifier it sees:
the real domain id, or an obfuscated one per tenant
(``policy_scope_obfuscate_identifiers``). The edges (hint parsing and the
store read in the scheduler, the API) translate documents with
:func:`to_real` before the engine sees them, and back with
:func:`to_tenant` to show them; the engine reads real ids only.
"""

import dataclasses
import typing

from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.topology import Topology


def to_real(document: PolicyDocument, topology: Topology,
            project_id: typing.Optional[str]) -> PolicyDocument:
    """The document with every targeted domain in its real id.

    Policies of scopes ``topology`` does not define are left as written:
    the engine rejects every host for them (hard) or ignores them (soft).
    Each translated policy remembers how the tenant wrote it
    (``PolicyDocument.written``), so reasons keep naming it that way.

    :param document: policies as the tenant wrote them.
    :param topology: scopes and domains.
    :param project_id: the tenant, for obfuscated scopes.
    :raises PolicyError: naming the field and the identifier as the tenant
        wrote it, when the scope takes no identifiers or none of its
        domains has it.
    """
    policies, fields, written = [], {}, dict(document.written)
    for i, policy in enumerate(document.policies):
        field = document.field_of(i)
        label = document.label_of(i)
        if policy.identifier is not None and \
                topology.scope(policy.scope) is not None:
            real = topology.resolve_identifier(
                policy.scope, policy.identifier, project_id, field)
            policy = policy.with_identifier(real)
        policies.append(policy)
        fields[policy] = field
        if label != str(policy):
            written[policy] = label
    return dataclasses.replace(document, policies=tuple(policies),
                               fields=fields, written=written)


def to_tenant(document: PolicyDocument, topology: Topology,
              project_id: typing.Optional[str]) -> PolicyDocument:
    """The document with real identifiers as ``project_id`` sees them.

    :param document: policies with real identifiers.
    :param topology: scopes and domains.
    :param project_id: the tenant.
    """
    return topology.to_tenant(document, project_id)


__all__ = ['to_real', 'to_tenant', 'PolicyError']
