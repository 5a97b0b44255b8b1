"""Topologies built from aggregate metadata and from stored scope records.

One builder, :func:`build`, assembles every Topology; the parsers only say
which scopes and domains there are.
"""

import dataclasses
import typing
import uuid

from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.names import validate_scope_name
from nova_scoped_policies.topology.model import AggregateInfo
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Licence
from nova_scoped_policies.topology.model import LICENSE_KEY
from nova_scoped_policies.topology.model import Scope
from nova_scoped_policies.topology.model import Topology
from nova_scoped_policies.topology import network

SCOPE_KEY = 'policy_scope'
"""Aggregate metadata key naming the scope the aggregate is a domain of."""
ALLOW_IDENTIFIERS_KEY = 'policy_scope_allow_identifiers'
OBFUSCATE_IDENTIFIERS_KEY = 'policy_scope_obfuscate_identifiers'
NAMESPACE_KEY = 'policy_scope_namespace'


class ScopeRecord(typing.Protocol):
    """What the topology reads of a stored scope: the policy store's
    :class:`nova_scoped_policies.db.records.ScopeRecord` has it (the
    store sits above the topology, which names only what it reads)."""

    name: str
    allow_identifiers: bool
    obfuscate_identifiers: bool
    obfuscate_namespace_uuid: typing.Optional[str]
    aggregates: typing.Tuple[str, ...]
    parent: typing.Optional[str]
    # read with defaults, so records without them still build:
    # network: bool (a level of the network tree)
    # uplink_kbps: Optional[int] (the level's default uplink capacity)


_TRUE = ('true', '1', 'yes', 'on')
_FALSE = ('false', '0', 'no', 'off')


def build(scopes: typing.Iterable[Scope] = (),
          domains: typing.Iterable[Domain] = (),
          problems: typing.Iterable[str] = (),
          licences: typing.Mapping[str, Licence] = {},
          uplinks: typing.Optional[network.Uplinks] = None) -> Topology:
    """The one way a :class:`Topology` is assembled.

    :param scopes: the deployer-defined scopes (``host`` is implicit).
    :param domains: every domain of every scope.
    :param problems: data problems found while parsing, for operators.
    :param licences: product -> where it may run.
    :param uplinks: hosts' own network edges, and what the parsers
        refused of the network tree (:class:`.network.Uplinks`).
    """
    return Topology(scopes, domains, problems, licences, uplinks)


def licences(aggregates: typing.Iterable[AggregateInfo]
             ) -> typing.Dict[str, Licence]:
    """product -> the aggregates whose metadata says
    ``license:<product>=allowed`` and their hosts."""
    found: typing.Dict[str, typing.Tuple[set, set]] = {}
    for agg in aggregates:
        for key, value in (agg.metadata or {}).items():
            if key.startswith(LICENSE_KEY) and \
                    str(value).strip().lower() == 'allowed':
                product = key[len(LICENSE_KEY):].upper()
                uuids, hosts = found.setdefault(product, (set(), set()))
                uuids.add(str(agg.uuid))
                hosts.update(agg.hosts)
    return {product: Licence(frozenset(uuids), frozenset(hosts))
            for product, (uuids, hosts) in found.items()}


def from_scope_records(records: typing.Iterable[ScopeRecord],
                       hosts: typing.Mapping[str, typing.Iterable[str]] = {},
                       metadata: typing.Mapping[
                           str, typing.Mapping[str, str]] = {},
                       host_uplink_kbps: typing.Optional[int] = None
                       ) -> Topology:
    """A topology of stored scope records alone.

    Each aggregate of a record is a domain named by its uuid.

    :param records: scope records of the policy store.
    :param hosts: aggregate uuid -> the hosts of it that matter.
    :param metadata: aggregate uuid -> its metadata, where the caller
        has it: the network tree's capacities (``uplink_kbps``,
        ``host_uplink_kbps``).
    :param host_uplink_kbps: the capacity of a host's own network edge
        where no aggregate gives one (None: no limit).
    """
    records = list(records)
    scopes = [scope_from_record(r) for r in records]
    domains = [Domain(agg, agg, r.name, frozenset(hosts.get(agg, ())))
               for r in records for agg in r.aggregates]
    infos = {d.id: AggregateInfo(d.id, d.name, d.hosts,
                                 metadata.get(d.id, {})) for d in domains}
    domains, uplinks = _network(scopes, domains, list(infos.values()),
                                host_uplink_kbps)
    return build(scopes, domains, uplinks=uplinks)


def _network(scopes: typing.Sequence[Scope],
             domains: typing.Sequence[Domain],
             aggregates: typing.Sequence[AggregateInfo],
             default: typing.Optional[int]
             ) -> typing.Tuple[typing.List[Domain],
                               typing.Optional[network.Uplinks]]:
    """The domains with their uplink capacities, and the hosts' edges,
    read from the aggregates' metadata (only when some scope is a
    network level: other clouds build as they always did)."""
    levels = {s.name for s in scopes if s.network}
    if not levels:
        return list(domains), None
    findings: typing.List[network.Finding] = []
    per_host: typing.Dict[str, typing.Set[int]] = {}
    level_of = {d.id: d.scope for d in domains if d.scope in levels}
    own: typing.Dict[str, int] = {}
    for agg in aggregates:
        key = str(agg.uuid)
        value = network.parse_metadata(agg.name, agg.hosts,
                                       agg.metadata or {}, level_of.get(key),
                                       key, per_host, findings)
        if value is not None:
            own[key] = value
    found = [dataclasses.replace(d, uplink_kbps=own[d.id])
             if d.id in own and d.scope in levels else d for d in domains]
    hosts = network.host_uplinks(per_host, findings)
    return found, network.Uplinks(hosts, default, tuple(findings))


def _flag(value: str) -> typing.Optional[bool]:
    low = str(value).strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    return None


def from_aggregates(aggregates: typing.Iterable[AggregateInfo],
                    stored: typing.Iterable[ScopeRecord] = (),
                    host_uplink_kbps: typing.Optional[int] = None
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
    :param stored: scope records of the policy store
        (:class:`~nova_scoped_policies.db.records.ScopeRecord`).
    :param host_uplink_kbps: the capacity of a host's own network edge
        where no aggregate's ``host_uplink_kbps`` gives one (None: no
        limit).

    Network scopes (stored with ``network``) read their domains' uplink
    capacities from the aggregates' ``uplink_kbps`` metadata, and hosts
    their own edge's from any of their aggregates'
    ``host_uplink_kbps`` (``topology/network.py``).
    """
    aggregates = list(aggregates)
    licensed = licences(aggregates)
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
        names = {record.name for record in stored}
        for name in sorted(names & set(settings)):
            problems.append(f'scope {name} is defined by the policy store '
                            f'and by aggregate metadata {SCOPE_KEY}; the '
                            'policy store wins')
        scopes = [s for s in scopes if s.name not in names]
        domains = [d for d in domains if d.scope not in names]
        for record in stored:
            scopes.append(scope_from_record(record))
            for agg_uuid in record.aggregates:
                agg = by_uuid.get(agg_uuid)
                if agg is None:
                    problems.append(f'scope {record.name}: aggregate '
                                    f'{agg_uuid} does not exist')
                    continue
                domains.append(Domain(agg_uuid, agg.name, record.name,
                                      frozenset(agg.hosts)))
    domains, uplinks = _network(scopes, domains, aggregates,
                                host_uplink_kbps)
    return build(scopes, domains, problems, licensed, uplinks)


def scope_from_record(record: ScopeRecord) -> Scope:
    """A :class:`Scope` from a policy store scope record."""
    namespace = record.obfuscate_namespace_uuid
    return Scope(record.name, record.allow_identifiers,
                 record.obfuscate_identifiers,
                 uuid.UUID(namespace) if namespace else None,
                 record.parent, bool(getattr(record, 'network', False)),
                 getattr(record, 'uplink_kbps', None))


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
