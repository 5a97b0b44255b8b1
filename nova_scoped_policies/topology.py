"""Scopes, their domains and the hosts in them (pure Python).

A *scope* (rack, switch, maintenance zone...) is split into *domains*; each
domain is one host aggregate. ``host`` is the implicit scope in which every
host is the sole member of its own domain. A host should be in at most one
domain per scope; when it is in none or in several, the topology says so
(:meth:`Topology.domains_of`, :attr:`Topology.problems`) and the engine
turns that into a rejection reason. Nothing here raises on bad data.

One interface, several feeds: :func:`from_aggregates` reads the
``policy_scope`` metadata of host aggregates; the policy service (a later
component) can build the same object from its own scope records.
"""

import dataclasses
import typing
import uuid

from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy.parser import validate_scope_name

SCOPE_KEY = 'policy_scope'
"""Aggregate metadata key naming the scope the aggregate is a domain of."""
ALLOW_IDENTIFIERS_KEY = 'policy_scope_allow_identifiers'
OBFUSCATE_IDENTIFIERS_KEY = 'policy_scope_obfuscate_identifiers'
NAMESPACE_KEY = 'policy_scope_namespace'

_TRUE = ('true', '1', 'yes', 'on')
_FALSE = ('false', '0', 'no', 'off')

NO_DOMAINS: typing.Tuple[str, ...] = ()


def obfuscate(namespace: uuid.UUID, project_id: str, domain_id: str) -> str:
    """A tenant's identifier for a domain (scoped-policies.rst).

    Two uuid5 passes: ``uuid5(uuid5(namespace, project_id), domain_id)``.

    :param namespace: the scope's obfuscation namespace.
    :param project_id: the tenant (project) id, as a string.
    :param domain_id: the real domain (aggregate) uuid, as a string.
    """
    tenant_ns = uuid.uuid5(namespace, str(project_id))
    return str(uuid.uuid5(tenant_ns, str(domain_id)))


@dataclasses.dataclass(frozen=True)
class Scope:
    """A deployer-defined scope.

    :param name: the scope name used in policies.
    :param allow_identifiers: tenants may target its domains by identifier.
    :param obfuscate_identifiers: tenants see per-tenant identifiers.
    :param namespace: the uuid5 namespace of the obfuscation.
    """

    name: str
    allow_identifiers: bool = False
    obfuscate_identifiers: bool = False
    namespace: typing.Optional[uuid.UUID] = None


@dataclasses.dataclass(frozen=True)
class Domain:
    """One domain of a scope: a host aggregate.

    :param id: the aggregate uuid (the real identifier).
    :param name: the aggregate name, for people.
    :param scope: the scope it is a domain of.
    :param hosts: the compute host names in it.
    """

    id: str
    name: str
    scope: str
    hosts: typing.FrozenSet[str] = frozenset()


@dataclasses.dataclass(frozen=True)
class AggregateInfo:
    """What :func:`from_aggregates` needs of a host aggregate.

    :param uuid: the aggregate uuid.
    :param name: the aggregate name.
    :param hosts: compute host names.
    :param metadata: the aggregate metadata.
    """

    uuid: str
    name: str
    hosts: typing.Iterable[str] = ()
    metadata: typing.Mapping[str, str] = dataclasses.field(
        default_factory=dict)


class HostIndex:
    """host -> domain lookups for one scope, built once.

    ``single`` maps hosts in exactly one domain to it; ``multiple`` maps hosts
    in several domains (a deployer error) to all of them. Hosts in neither
    are in no domain of the scope.
    """

    __slots__ = ('single', 'multiple')

    def __init__(self, single: typing.Dict[str, str],
                 multiple: typing.Dict[str, typing.Tuple[str, ...]]) -> None:
        self.single = single
        self.multiple = multiple

    def domains_of(self, host: str) -> typing.Tuple[str, ...]:
        domain = self.single.get(host)
        if domain is not None:
            return (domain,)
        return self.multiple.get(host, NO_DOMAINS)


class Topology:
    """Scopes, their domains, and host lookups.

    :param scopes: the deployer-defined scopes (``host`` is implicit).
    :param domains: every domain of every scope.
    :param problems: data problems found while building, for operators.
    """

    def __init__(self, scopes: typing.Iterable[Scope] = (),
                 domains: typing.Iterable[Domain] = (),
                 problems: typing.Iterable[str] = ()) -> None:
        self._scopes = {s.name: s for s in scopes}
        self._scopes[HOST_SCOPE] = Scope(HOST_SCOPE)
        self._domains: typing.Dict[str, Domain] = {}
        self._by_scope: typing.Dict[str, typing.List[Domain]] = {
            name: [] for name in self._scopes}
        self.problems = list(problems)
        for domain in domains:
            if domain.scope not in self._scopes or domain.scope == HOST_SCOPE:
                self.problems.append(
                    f'domain {domain.name} ({domain.id}) names unknown '
                    f'scope {domain.scope!r}; ignored')
                continue
            self._domains[domain.id] = domain
            self._by_scope[domain.scope].append(domain)
        self._indexes: typing.Dict[str, HostIndex] = {}
        for name, members in self._by_scope.items():
            if name == HOST_SCOPE:
                continue
            index = self._build_index(members)
            self._indexes[name] = index
            for host, ids in sorted(index.multiple.items()):
                names = ', '.join(self._domains[i].name for i in ids)
                self.problems.append(
                    f'host {host} is in {len(ids)} domains of scope {name} '
                    f'({names}); a host may be in at most one')

    @staticmethod
    def _build_index(domains: typing.Sequence[Domain]) -> HostIndex:
        owners: typing.Dict[str, typing.List[str]] = {}
        for domain in domains:
            for host in domain.hosts:
                owners.setdefault(host, []).append(domain.id)
        single = {h: ids[0] for h, ids in owners.items() if len(ids) == 1}
        multiple = {h: tuple(sorted(ids)) for h, ids in owners.items()
                    if len(ids) > 1}
        return HostIndex(single, multiple)

    def scope(self, name: str) -> typing.Optional[Scope]:
        return self._scopes.get(name)

    @property
    def scope_names(self) -> typing.List[str]:
        return sorted(self._scopes)

    def domain(self, domain_id: str) -> typing.Optional[Domain]:
        return self._domains.get(domain_id)

    def domain_name(self, domain_id: str) -> str:
        """A name for people: the aggregate name, or the host name."""
        domain = self._domains.get(domain_id)
        return domain.name if domain else domain_id

    def domains(self, scope: str) -> typing.List[Domain]:
        return list(self._by_scope.get(scope, ()))

    def index(self, scope: str) -> typing.Optional[HostIndex]:
        """The host index of a deployer scope; None for ``host``/unknown."""
        return self._indexes.get(scope)

    def domains_of(self, scope: str, host: str) -> typing.Tuple[str, ...]:
        """The domains of ``scope`` that hold ``host`` (normally one)."""
        if scope == HOST_SCOPE:
            return (host,)
        index = self._indexes.get(scope)
        return index.domains_of(host) if index else NO_DOMAINS

    def identifier_for(self, scope: str, domain_id: str,
                       project_id: typing.Optional[str]) -> str:
        """The identifier ``project_id`` uses for a domain of ``scope``."""
        sc = self._scopes[scope]
        if sc.obfuscate_identifiers and project_id and sc.namespace:
            return obfuscate(sc.namespace, project_id, domain_id)
        return domain_id

    def resolve_identifier(self, scope: str, identifier: str,
                           project_id: typing.Optional[str],
                           field: str = 'policy') -> str:
        """Translate a tenant's domain identifier into the real domain id.

        :param scope: the scope of the policy.
        :param identifier: the identifier as written in the policy.
        :param project_id: the tenant; needed for obfuscated scopes.
        :param field: the field to name in errors.
        :raises PolicyError: the scope takes no identifiers, or no domain
            of it has that identifier for this tenant.
        """
        sc = self._scopes.get(scope)
        if sc is None:
            raise PolicyError(field, identifier, f'unknown scope {scope!r}')
        if scope == HOST_SCOPE or not sc.allow_identifiers:
            raise PolicyError(field, identifier, f'scope {scope} does not '
                              'allow targeting a domain by identifier')
        for domain in self._by_scope[scope]:
            if self.identifier_for(scope, domain.id, project_id) == \
                    identifier:
                return domain.id
        raise PolicyError(field, identifier,
                          f'no domain of scope {scope} has this identifier')

    def to_real(self, document: 'PolicyDocument',
                project_id: typing.Optional[str],
                real_ids: bool = False) -> 'PolicyDocument':
        """The document with every domain identifier in its real form.

        :param document: policies as the caller wrote them.
        :param project_id: the caller's project, for obfuscated scopes.
        :param real_ids: the caller wrote real ids (admins do).
        :raises PolicyError: naming the policy whose identifier is unknown
            or whose scope takes none.
        """
        def real(policy, field):
            if real_ids:
                self.resolve_identifier(policy.scope, policy.identifier,
                                        None, field)
                domain = self._domains.get(policy.identifier)
                if domain is None or domain.scope != policy.scope:
                    raise PolicyError(field, policy.identifier,
                                      f'no domain of scope {policy.scope} '
                                      'has this identifier')
                return policy.identifier
            return self.resolve_identifier(policy.scope, policy.identifier,
                                           project_id, field)
        return _map_identifiers(document, real)

    def to_tenant(self, document: 'PolicyDocument',
                  project_id: typing.Optional[str]) -> 'PolicyDocument':
        """The document with real identifiers as ``project_id`` sees them.
        """
        def tenant(policy, field):
            if policy.scope not in self._scopes:
                return policy.identifier
            return self.identifier_for(policy.scope, policy.identifier,
                                       project_id)
        return _map_identifiers(document, tenant)


def _map_identifiers(document: 'PolicyDocument', change) -> 'PolicyDocument':
    policies, fields = [], {}
    for i, policy in enumerate(document.policies):
        field = document.field_of(i)
        if policy.identifier is not None:
            policy = policy.with_identifier(change(policy, field))
        policies.append(policy)
        fields[policy] = field
    return dataclasses.replace(document, policies=tuple(policies),
                               fields=fields)


def _flag(value: str) -> typing.Optional[bool]:
    low = str(value).strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    return None


def from_aggregates(aggregates: typing.Iterable[AggregateInfo],
                    stored: typing.Iterable[typing.Mapping] = ()
                    ) -> Topology:
    """Build a topology from host aggregates and their metadata.

    An aggregate with ``policy_scope=<scope>`` is a domain of ``<scope>``.
    Scope settings come from the optional keys
    ``policy_scope_allow_identifiers``, ``policy_scope_obfuscate_identifiers``
    (booleans) and ``policy_scope_namespace`` (a uuid) on any of the scope's
    aggregates; disagreeing or malformed values are reported as problems and
    the scope falls back to not allowing identifiers.

    Scopes saved in the policy store (``stored``) are added; their domains
    are aggregates named by uuid, whose hosts come from ``aggregates``. A
    stored scope replaces a metadata scope of the same name.

    :param aggregates: every host aggregate of the cloud.
    :param stored: scope records of the policy store: ``name``,
        ``allow_identifiers``, ``obfuscate_identifiers``,
        ``obfuscate_namespace_uuid``, ``aggregates`` (uuids).
    """
    aggregates = list(aggregates)
    problems: typing.List[str] = []
    domains: typing.List[Domain] = []
    settings: typing.Dict[str, typing.Dict[str, typing.Set[str]]] = {}
    for agg in aggregates:
        meta = agg.metadata or {}
        if SCOPE_KEY not in meta:
            continue
        name = meta[SCOPE_KEY]
        try:
            validate_scope_name(f'aggregate {agg.name} metadata {SCOPE_KEY}',
                                name)
        except PolicyError as exc:
            problems.append(f'{exc}; aggregate ignored')
            continue
        if name == HOST_SCOPE:
            problems.append(f'aggregate {agg.name} metadata {SCOPE_KEY}: '
                            f'{HOST_SCOPE!r} is the implicit scope and '
                            'cannot be declared; aggregate ignored')
            continue
        domains.append(Domain(str(agg.uuid), agg.name, name,
                              frozenset(agg.hosts)))
        values = settings.setdefault(name, {})
        for key in (ALLOW_IDENTIFIERS_KEY, OBFUSCATE_IDENTIFIERS_KEY,
                    NAMESPACE_KEY):
            if key in meta:
                values.setdefault(key, set()).add(str(meta[key]))
    scopes = [_scope_from_settings(name, values, problems)
              for name, values in sorted(settings.items())]
    stored = list(stored)
    if stored:
        by_uuid = {str(agg.uuid): agg for agg in aggregates}
        names = {record['name'] for record in stored}
        for name in sorted(names & set(settings)):
            problems.append(f'scope {name} is defined by the policy store '
                            f'and by aggregate metadata {SCOPE_KEY}; the '
                            'policy store wins')
        scopes = [s for s in scopes if s.name not in names]
        domains = [d for d in domains if d.scope not in names]
        for record in stored:
            scopes.append(scope_from_record(record))
            for agg_uuid in record['aggregates']:
                agg = by_uuid.get(agg_uuid)
                if agg is None:
                    problems.append(f'scope {record["name"]}: aggregate '
                                    f'{agg_uuid} does not exist')
                    continue
                domains.append(Domain(agg_uuid, agg.name, record['name'],
                                      frozenset(agg.hosts)))
    return Topology(scopes, domains, problems)


def scope_from_record(record: typing.Mapping) -> Scope:
    """A :class:`Scope` from a policy store scope record."""
    namespace = record.get('obfuscate_namespace_uuid')
    return Scope(record['name'], bool(record['allow_identifiers']),
                 bool(record['obfuscate_identifiers']),
                 uuid.UUID(namespace) if namespace else None)


def _scope_from_settings(name: str, values: typing.Dict[str, typing.Set[str]],
                         problems: typing.List[str]) -> Scope:
    parsed: typing.Dict[str, typing.Any] = {}
    for key, seen in sorted(values.items()):
        if len(seen) > 1:
            problems.append(f'scope {name}: aggregates disagree on {key} '
                            f'({", ".join(sorted(seen))}); identifiers '
                            'disabled for the scope')
            return Scope(name)
        (raw,) = seen
        if key == NAMESPACE_KEY:
            try:
                parsed[key] = uuid.UUID(raw)
            except ValueError:
                problems.append(f'scope {name}: {key} {raw!r} is not a '
                                'uuid; identifiers disabled for the scope')
                return Scope(name)
        else:
            flag = _flag(raw)
            if flag is None:
                problems.append(f'scope {name}: {key} {raw!r} is not a '
                                'boolean; identifiers disabled for the scope')
                return Scope(name)
            parsed[key] = flag
    allow = parsed.get(ALLOW_IDENTIFIERS_KEY, False)
    obfuscate_ids = parsed.get(OBFUSCATE_IDENTIFIERS_KEY, False)
    namespace = parsed.get(NAMESPACE_KEY)
    if allow and obfuscate_ids and namespace is None:
        problems.append(f'scope {name}: {OBFUSCATE_IDENTIFIERS_KEY} is set '
                        f'but {NAMESPACE_KEY} is not; identifiers disabled '
                        'for the scope')
        return Scope(name)
    return Scope(name, allow, obfuscate_ids, namespace)
