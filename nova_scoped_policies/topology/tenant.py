"""Tenant translation: the identifiers a tenant sees for domains.

``policy_scope_obfuscate_identifiers`` gives each tenant its own identifier
per domain (scoped-policies.rst). These functions read a topology through
its public lookups only.
"""

import dataclasses
import typing
import uuid

from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import PolicyDocument


def obfuscate(namespace: uuid.UUID, project_id: str, domain_id: str) -> str:
    """A tenant's identifier for a domain (scoped-policies.rst).

    Two uuid5 passes: ``uuid5(uuid5(namespace, project_id), domain_id)``.

    :param namespace: the scope's obfuscation namespace.
    :param project_id: the tenant (project) id, as a string.
    :param domain_id: the real domain (aggregate) uuid, as a string.
    """
    tenant_ns = uuid.uuid5(namespace, str(project_id))
    return str(uuid.uuid5(tenant_ns, str(domain_id)))


def identifier_for(topology, scope: str, domain_id: str,
                   project_id: typing.Optional[str]) -> str:
    """The identifier ``project_id`` uses for a domain of ``scope``.

    :param topology: scopes and domains.
    :param scope: a defined scope.
    :param domain_id: the real domain id.
    :param project_id: the tenant (None: the real id).
    """
    sc = topology.scope(scope)
    if sc.obfuscate_identifiers and project_id and sc.namespace:
        return obfuscate(sc.namespace, project_id, domain_id)
    return domain_id


def resolve_identifier(topology, scope: str, identifier: str,
                       project_id: typing.Optional[str],
                       field: str = 'policy') -> str:
    """Translate a tenant's domain identifier into the real domain id.

    :param topology: scopes and domains.
    :param scope: the scope of the policy.
    :param identifier: the identifier as written in the policy.
    :param project_id: the tenant; needed for obfuscated scopes.
    :param field: the field to name in errors.
    :raises PolicyError: the scope takes no identifiers, or no domain
        of it has that identifier for this tenant.
    """
    topology.targetable(scope, field, identifier)
    for domain in topology.domains(scope):
        if identifier_for(topology, scope, domain.id, project_id) == \
                identifier:
            return domain.id
    raise PolicyError(field, identifier,
                      f'no domain of scope {scope} has this identifier')


def to_real(topology, document: PolicyDocument,
            project_id: typing.Optional[str],
            real_ids: bool = False) -> PolicyDocument:
    """The document with every domain identifier in its real form.

    :param topology: scopes and domains.
    :param document: policies as the caller wrote them.
    :param project_id: the caller's project, for obfuscated scopes.
    :param real_ids: the caller wrote real ids (admins do).
    :raises PolicyError: naming the policy whose identifier is unknown
        or whose scope takes none.
    """
    def real(policy, field):
        if real_ids:
            return topology.target(policy.scope, policy.identifier, field)
        return resolve_identifier(topology, policy.scope, policy.identifier,
                                  project_id, field)
    return _map_identifiers(document, real)


def to_tenant(topology, document: PolicyDocument,
              project_id: typing.Optional[str]) -> PolicyDocument:
    """The document with real identifiers as ``project_id`` sees them.

    :param topology: scopes and domains.
    :param document: policies with real identifiers.
    :param project_id: the tenant.
    """
    def tenant(policy, field):
        if topology.scope(policy.scope) is None:
            return policy.identifier
        return identifier_for(topology, policy.scope, policy.identifier,
                              project_id)
    return _map_identifiers(document, tenant)


def _map_identifiers(document: PolicyDocument, change) -> PolicyDocument:
    policies, fields = [], {}
    for i, policy in enumerate(document.policies):
        field = document.field_of(i)
        if policy.identifier is not None:
            policy = policy.with_identifier(change(policy, field))
        policies.append(policy)
        fields[policy] = field
    return dataclasses.replace(document, policies=tuple(policies),
                               fields=fields)
