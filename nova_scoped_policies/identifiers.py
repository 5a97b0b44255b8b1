"""Tenant identifiers of domains, translated once at the edges.

A tenant targets a domain (``affinity:zone:ID``) by the identifier it sees:
the real domain id, or an obfuscated one per tenant
(``policy_scope_obfuscate_identifiers``). The edges translate what tenants
write with :func:`to_real` before anything else reads it (the hint in the
scheduler, bodies in the API); stored policies are real already and only
get the tenant's wording (:func:`worded`) so that errors and reasons name
them as the tenant would. Merging, validation and the engine read real
ids only; :func:`to_tenant` translates back for display.
"""

import dataclasses
import typing

from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.topology import Topology


def to_real(document: PolicyDocument, topology: Topology,
            project_id: typing.Optional[str],
            strict: bool = True) -> PolicyDocument:
    """The document with every targeted domain in its real id.

    Policies of scopes ``topology`` does not define are left as written:
    the engine rejects every host for them (hard) or ignores them (soft).
    Each translated policy remembers how the tenant wrote it
    (``PolicyDocument.written``), so reasons keep naming it that way.

    :param document: policies as the tenant wrote them.
    :param topology: scopes and domains.
    :param project_id: the tenant, for obfuscated scopes.
    :param strict: False leaves an identifier that names no domain as
        written (the engine then reports it, as an audit does).
    :raises PolicyError: naming the field and the identifier as the tenant
        wrote it, when the scope takes no identifiers or none of its
        domains has it (``strict`` only).
    """
    policies, fields, written = [], {}, dict(document.written)
    for i, policy in enumerate(document.policies):
        field = document.field_of(i)
        label = document.label_of(i)
        if policy.identifier is not None and \
                topology.scope(policy.scope) is not None:
            try:
                real = topology.resolve_identifier(
                    policy.scope, policy.identifier, project_id, field)
            except PolicyError:
                if strict:
                    raise
                real = policy.identifier
            policy = policy.with_identifier(real)
        policies.append(policy)
        fields[policy] = field
        if label != str(policy):
            written[policy] = label
    return dataclasses.replace(document, policies=tuple(policies),
                               fields=fields, written=written)


def worded(document: PolicyDocument, topology: Topology,
           project_id: typing.Optional[str]) -> PolicyDocument:
    """The same document (real identifiers), remembering how
    ``project_id`` writes each targeted policy (``PolicyDocument.written``)
    so that merge errors, reasons and violations name it that way.

    For stored policies: they are real already and are never translated
    back and forth.

    :param document: policies with real identifiers.
    :param topology: scopes and domains.
    :param project_id: the tenant the policies are shown to.
    """
    shown = topology.to_tenant(document, project_id)
    written = dict(document.written)
    for policy, as_shown in zip(document.policies, shown.policies):
        if policy not in written and as_shown != policy:
            written[policy] = str(as_shown)
    if written == document.written:
        return document
    return dataclasses.replace(document, written=written)


def to_tenant(document: PolicyDocument, topology: Topology,
              project_id: typing.Optional[str]) -> PolicyDocument:
    """The document with real identifiers as ``project_id`` sees them.

    :param document: policies with real identifiers.
    :param topology: scopes and domains.
    :param project_id: the tenant.
    """
    return topology.to_tenant(document, project_id)


__all__ = ['to_real', 'to_tenant', 'worded', 'PolicyError']
