"""The topology model: scopes, their domains and host lookups.

A *scope* (rack, switch, maintenance zone...) is split into *domains*; each
domain is one host aggregate. ``host`` is the implicit scope in which every
host is the sole member of its own domain. A host should be in at most one
domain per scope; when it is in none or in several, the topology says so
(:meth:`Topology.domains_of`, :attr:`Topology.problems`) and the engine
turns that into a rejection reason. Nothing here raises on bad data.
"""

import copy
import dataclasses
import typing
import uuid

from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.topology import network as network_mod
from nova_scoped_policies.topology import tenant

NO_DOMAINS: typing.Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Scope:
    """A deployer-defined scope.

    :param name: the scope name used in policies.
    :param allow_identifiers: tenants may target its domains by identifier.
    :param obfuscate_identifiers: tenants see per-tenant identifiers.
    :param namespace: the uuid5 namespace of the obfuscation.
    :param parent: a coarser scope each domain of this one lies inside
        (``row`` for ``rack``), or None.
    :param network: a level of the network tree (its domains are
        switches; ``topology/network.py``).
    :param uplink_kbps: a network level's default uplink capacity,
        kbit/s each direction, for its domains without their own.
    """

    name: str
    allow_identifiers: bool = False
    obfuscate_identifiers: bool = False
    namespace: typing.Optional[uuid.UUID] = None
    parent: typing.Optional[str] = None
    network: bool = False
    uplink_kbps: typing.Optional[int] = None


@dataclasses.dataclass(frozen=True)
class Domain:
    """One domain of a scope: a host aggregate.

    :param id: the aggregate uuid (the real identifier).
    :param name: the aggregate name, for people.
    :param scope: the scope it is a domain of.
    :param hosts: the compute host names in it.
    :param uplink_kbps: a network domain's own uplink capacity, kbit/s
        each direction (its aggregate's ``uplink_kbps``), or None.
    """

    id: str
    name: str
    scope: str
    hosts: typing.FrozenSet[str] = frozenset()
    uplink_kbps: typing.Optional[int] = None


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


LICENSE_KEY = 'license:'
"""Aggregate metadata ``license:<PRODUCT>=allowed``: its hosts may run
PRODUCT (the ``license:PRODUCT`` policy)."""
LICENSE_TRAIT = 'CUSTOM_LICENSE_'
"""A host with the trait ``CUSTOM_LICENSE_<PRODUCT>`` may run PRODUCT."""


@dataclasses.dataclass(frozen=True)
class Licence:
    """Where one product may run.

    :param aggregates: uuids of the aggregates that declare it.
    :param by_aggregate: the hosts of those aggregates.
    :param by_trait: the hosts with its trait (where traits are known).
    """

    aggregates: typing.FrozenSet[str] = frozenset()
    by_aggregate: typing.FrozenSet[str] = frozenset()
    by_trait: typing.FrozenSet[str] = frozenset()


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


_NO_LICENCE = Licence()


class Topology:
    """Scopes, their domains, and host lookups.

    :param scopes: the deployer-defined scopes (``host`` is implicit).
    :param domains: every domain of every scope.
    :param problems: data problems found while building, for operators.
    :param licences: product (upper case) -> where it may run.
    :param uplinks: the capacities of hosts' own network edges, and what
        the feeds refused of the network tree.
    """

    def __init__(self, scopes: typing.Iterable[Scope] = (),
                 domains: typing.Iterable[Domain] = (),
                 problems: typing.Iterable[str] = (),
                 licences: typing.Mapping[str, Licence] = {},
                 uplinks: typing.Optional[network_mod.Uplinks] = None
                 ) -> None:
        self._licences = dict(licences)
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
        self.network = network_mod.NetworkTree(self, uplinks)
        """The network tree (empty without network scopes)."""
        self.problems.extend(self.network.problems)

    def licence(self, product: str) -> Licence:
        """Where ``product`` may run (nowhere when nothing declares it)."""
        return self._licences.get(product.upper(), _NO_LICENCE)

    def licensed(self, product: str) -> typing.FrozenSet[str]:
        """The hosts that may run ``product``."""
        found = self.licence(product)
        return found.by_aggregate | found.by_trait

    def licence_aggregates(self, product: str) -> typing.FrozenSet[str]:
        return self.licence(product).aggregates

    def licensed_by_aggregate(self, product: str) -> typing.FrozenSet[str]:
        return self.licence(product).by_aggregate

    def licensed_by_trait(self, product: str) -> typing.FrozenSet[str]:
        return self.licence(product).by_trait

    def with_traits(self, traits: typing.Mapping[
            str, typing.Iterable[str]]) -> 'Topology':
        """A copy of this topology told which hosts carry which traits:
        a host with ``CUSTOM_LICENSE_<PRODUCT>`` may run PRODUCT (this
        one itself when no host has such a trait).

        :param traits: host -> its traits.
        """
        by_trait: typing.Dict[str, typing.Set[str]] = {}
        for host, names in traits.items():
            for trait in names:
                if trait.startswith(LICENSE_TRAIT):
                    by_trait.setdefault(trait[len(LICENSE_TRAIT):],
                                        set()).add(host)
        if not by_trait:
            return self
        other = copy.copy(self)
        other._licences = dict(self._licences)
        for product, hosts in by_trait.items():
            found = other._licences.get(product, _NO_LICENCE)
            other._licences[product] = dataclasses.replace(
                found, by_trait=frozenset(hosts))
        return other

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

    def targetable(self, name: str, field: str, shown: str) -> Scope:
        """The scope ``name`` of a policy that targets one of its domains
        by identifier.

        :param field: the field to name in errors.
        :param shown: the identifier as the error may show it.
        :raises PolicyError: no such scope, or it takes no identifiers.
        """
        found = self._scopes.get(name)
        if found is None:
            raise PolicyError(field, shown, f'unknown scope {name!r}')
        if name == HOST_SCOPE or not found.allow_identifiers:
            raise PolicyError(field, shown, f'scope {name} does not '
                              'allow targeting a domain by identifier')
        return found

    def target(self, scope: str, domain_id: str, field: str,
               shown: typing.Optional[str] = None) -> str:
        """``domain_id``, checked: a real domain of ``scope``, a scope
        that takes identifiers.

        :param field: the field to name in errors.
        :param shown: the identifier as the error may show it (default:
            ``domain_id``).
        :raises PolicyError: the scope takes no identifiers or has no
            such domain.
        """
        shown = domain_id if shown is None else shown
        self.targetable(scope, field, shown)
        domain = self._domains.get(domain_id)
        if domain is None or domain.scope != scope:
            raise PolicyError(field, shown, f'no domain of scope {scope} '
                              'has this identifier')
        return domain_id

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

    def nesting_problem(self, scope: str) -> typing.Optional[str]:
        """Why ``scope`` does not nest in its parent scope; None if it does
        (or has no parent). Names the domains at fault.
        """
        sc = self._scopes.get(scope)
        if sc is None or sc.parent is None:
            return None
        parent = self._scopes.get(sc.parent)
        if parent is None or sc.parent == HOST_SCOPE:
            return f'parent scope {sc.parent} of {scope} is not defined'
        seen = {scope}
        while parent.parent is not None:
            if parent.name in seen:
                return f'scope parents of {scope} form a cycle'
            seen.add(parent.name)
            parent = self._scopes.get(parent.parent) or Scope(parent.parent)
        for domain in self._by_scope.get(scope, ()):
            outer = {d for host in domain.hosts
                     for d in self.domains_of(sc.parent, host)}
            if len(outer) != 1 or any(
                    len(self.domains_of(sc.parent, h)) != 1
                    for h in domain.hosts):
                names = ', '.join(sorted(self.domain_name(d)
                                         for d in outer)) or 'none'
                return (f'domain {domain.name} of {scope} is not inside one '
                        f'domain of its parent scope {sc.parent} '
                        f'(it spans: {names})')
        return None

    def identifier_for(self, scope: str, domain_id: str,
                       project_id: typing.Optional[str]) -> str:
        """See :func:`.tenant.identifier_for`."""
        return tenant.identifier_for(self, scope, domain_id, project_id)

    def resolve_identifier(self, scope: str, identifier: str,
                           project_id: typing.Optional[str],
                           field: str = 'policy') -> str:
        """See :func:`.tenant.resolve_identifier`."""
        return tenant.resolve_identifier(self, scope, identifier,
                                         project_id, field)

    def to_real(self, document: PolicyDocument,
                project_id: typing.Optional[str],
                real_ids: bool = False) -> PolicyDocument:
        """See :func:`.tenant.to_real`."""
        return tenant.to_real(self, document, project_id, real_ids)

    def to_tenant(self, document: PolicyDocument,
                  project_id: typing.Optional[str]) -> PolicyDocument:
        """See :func:`.tenant.to_tenant`."""
        return tenant.to_tenant(self, document, project_id)
