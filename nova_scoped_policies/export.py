"""A running cloud as a simulator scenario (simulation.md, "A running
cloud as a scenario").

The pure part of ``GET /export`` (microversion 1.5) and of ``openstack
scoped policy export``: typed records of what the policy service read
(:class:`Cloud`, filled by :mod:`nova_scoped_policies.api.export`) become
the scenario document :func:`scenario` returns, ready for YAML or JSON.
No HTTP, no configuration here.

* Hosts: each resource class with Placement's ``total`` and ``reserved``,
  and under ``inventory`` the fields that differ from Placement's
  defaults (``allocation_ratio`` other than 1.0, ``min_unit`` above 1,
  ``step_size`` above 1, a ``max_unit`` below the capacity, the only one
  that can refuse an amount). A class several providers of one tree have
  is written as one inventory of their summed capacity (``total x
  allocation_ratio`` each, ``reserved`` keeping it exact, no unit
  fields): the simulator's hosts are single providers.
* Servers: at their host with the resources of their allocations; their
  names made unique and stable (``name``, or ``name-<8 hex of the uuid>``
  for each server of a name several share).
* Holds: the capacity stacks' decisions hold in Placement, at its host,
  with the stack and server it is held for.
* Config: the scheduler options that shape a decision (:class:`Config`).
* ``project``: the other projects' servers and holds stay as load
  (``load-1``..., holds without stack or project), with no name, project
  or group; their groups and stacks are left out.
* ``obfuscate``: host, aggregate, server, group, stack and project names
  become surrogates keyed by :class:`Surrogates` (the same name, the same
  surrogate, in every export with that key); aggregate uuids and scope
  namespaces too, so that tenants' identifiers of domains in obfuscating
  scopes stay consistent. Policies, rules and scopes are kept.
"""

import dataclasses
import hashlib
import hmac
import itertools
import math
import re
import typing
import uuid

from nova_scoped_policies.db import records
from nova_scoped_policies import identifiers
from nova_scoped_policies.policy import parser
from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies import topology as topo

LOAD = 'load'
"""Prefix of another project's servers' names under ``project``."""
DEFAULT_KEY = 'nova-scoped-policies export'
"""The surrogates' key when the service configures none: stable across
clouds, so a guessable name's surrogate can be guessed too."""
_SPACE = re.compile(r'\s+')


MAX_UNIT = 0x7FFFFFFF
"""Placement's ``max_unit`` when an inventory gives none."""


@dataclasses.dataclass(frozen=True)
class Inventory:
    """One resource class of a host, as Placement holds it.

    :param total: the inventory's total.
    :param reserved: its reserved amount.
    :param allocation_ratio: its allocation ratio.
    :param min_unit: the least one allocation takes.
    :param max_unit: the most one allocation takes.
    :param step_size: what an allocation's amount is a multiple of.
    """

    total: int
    reserved: int = 0
    allocation_ratio: float = 1.0
    min_unit: int = 1
    max_unit: int = MAX_UNIT
    step_size: int = 1

    @property
    def details(self) -> typing.Dict[str, typing.Any]:
        """The fields a scenario's ``hosts[].inventory`` gives: those
        that differ from Placement's defaults, and ``max_unit`` only
        below the capacity (at or above it, it refuses nothing)."""
        found: typing.Dict[str, typing.Any] = {}
        if self.allocation_ratio != 1.0:
            found['allocation_ratio'] = float(self.allocation_ratio)
        if self.min_unit != 1:
            found['min_unit'] = self.min_unit
        if self.max_unit < self.capacity:
            found['max_unit'] = self.max_unit
        if self.step_size != 1:
            found['step_size'] = self.step_size
        return found

    @property
    def capacity(self) -> int:
        """Placement's capacity: ``int((total - reserved) x ratio)``."""
        return int((self.total - self.reserved) * self.allocation_ratio)

    @property
    def modelled(self) -> typing.Tuple[int, int]:
        """(resources, reserved) at a ratio of 1.0, with the same
        capacity."""
        total = math.floor(self.total * self.allocation_ratio)
        return total, max(0, total - max(0, self.capacity))

    def plus(self, other: 'Inventory') -> 'Inventory':
        """One inventory of the same class on two providers of a tree
        (at a ratio of 1.0, the capacity of both; their units, which one
        inventory cannot hold, left out)."""
        (a, a_kept), (b, b_kept) = self.modelled, other.modelled
        return Inventory(a + b, a_kept + b_kept)


@dataclasses.dataclass(frozen=True)
class Host:
    """A compute node (a root resource provider and its tree).

    :param name: the provider's name (the hypervisor host name).
    :param inventories: resource class -> its inventory (the tree's).
    :param traits: the root provider's traits.
    """

    name: str
    inventories: typing.Mapping[str, Inventory]
    traits: typing.Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Aggregate:
    """A host aggregate the export writes.

    :param uuid: its uuid.
    :param name: its name (its uuid when Nova is not read).
    :param hosts: its hosts (provider names).
    :param scope: the stored scope it is a domain of, or None.
    :param metadata: the metadata the scheduler reads besides scopes
        (``trait:...`` of forbidden aggregates, ``license:...``).
    """

    uuid: str
    name: str
    hosts: typing.Tuple[str, ...] = ()
    scope: typing.Optional[str] = None
    metadata: typing.Mapping[str, str] = dataclasses.field(
        default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Server:
    """A server that runs.

    :param uuid: the instance uuid.
    :param name: its name in Nova (its uuid when Nova is not read).
    :param host: the host of its allocations.
    :param project: its project.
    :param resources: what its allocations take.
    :param group: the uuid of the group that counts it, or None.
    """

    uuid: str
    name: str
    host: str
    project: str
    resources: typing.Mapping[str, int]
    group: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Group:
    """A server group with policies.

    :param uuid: the Nova server group's uuid.
    :param name: its name (its uuid when it has none).
    :param project: its project.
    :param document: its policies with real identifiers (a plain Nova
        group's as :func:`.policy.from_nova_group` reads them).
    """

    uuid: str
    name: str
    project: str
    document: PolicyDocument


@dataclasses.dataclass(frozen=True)
class Stack:
    """A stored stack decision.

    :param id: its id.
    :param name: its name.
    :param project: its project.
    :param document: its stack document (``{"stack": {...}}``).
    """

    id: str
    name: str
    project: str
    document: typing.Mapping[str, typing.Any]


@dataclasses.dataclass(frozen=True)
class Hold:
    """Capacity a stack's decision holds in Placement (a hold consumer's
    allocations).

    :param consumer: the hold consumer.
    :param host: the host of its allocations.
    :param project: its project.
    :param resources: what it takes.
    :param stack: the id of the stored stack that holds it, if one does.
    :param server: that stack's server it is held for.
    """

    consumer: str
    host: str
    project: str
    resources: typing.Mapping[str, int]
    stack: typing.Optional[str] = None
    server: typing.Optional[str] = None


DECISION_OPTIONS = ('allow_policy_hint', 'soft_affinity_weight_multiplier',
                    'soft_anti_affinity_weight_multiplier',
                    'enable_scoped_plan_filter',
                    'enable_forbidden_aggregates_filter',
                    'enable_scoped_policy_query_filter',
                    'max_query_aggregates')
"""The ``[scoped_policies]`` options that shape a scheduling decision
(the others say where the store, the lock and the aggregates are read,
and how often)."""
NOT_SIMULATED = ('host_subset_size', 'shuffle_best_same_weighed_hosts',
                 'image_props_weight_multiplier')
"""nova's ``[filter_scheduler]`` options the simulator holds at one value
(it decides deterministically, without nova's cell database), which an
export therefore leaves out."""


@dataclasses.dataclass(frozen=True)
class Config:
    """nova-scheduler's options that shape a decision, as the policy API
    reads them.

    :param scoped_policies: our ``[scoped_policies]`` options of
        :data:`DECISION_OPTIONS` (unset ones left out).
    :param filter_scheduler: nova's ``[filter_scheduler]`` options, or
        None where the API does not read nova-scheduler's configuration.
    """

    scoped_policies: typing.Mapping[str, typing.Any] = dataclasses.field(
        default_factory=dict)
    filter_scheduler: typing.Optional[typing.Mapping[str, typing.Any]] = None

    def scenario(self) -> typing.Dict[str, typing.Any]:
        """The scenario's ``config``: ours flat, nova's under
        ``filter_scheduler`` (a name both groups have is ours flat)."""
        found: typing.Dict[str, typing.Any] = {
            k: v for k, v in sorted(self.scoped_policies.items())
            if v is not None}
        nova = {k: v for k, v in sorted(
            (self.filter_scheduler or {}).items())
            if k not in NOT_SIMULATED and v is not None}
        if nova:
            found['filter_scheduler'] = nova
        return found


@dataclasses.dataclass(frozen=True)
class Cloud:
    """What an export read.

    :param scopes: the stored scopes.
    :param hosts: every compute node.
    :param aggregates: the scopes' aggregates and those with metadata
        the scheduler reads.
    :param servers: every server that runs.
    :param groups: every group with policies.
    :param stacks: every stored stack.
    :param holds: every hold of a stack's decision.
    :param config: the scheduler's options.
    """

    scopes: typing.Tuple[records.ScopeRecord, ...] = ()
    hosts: typing.Tuple[Host, ...] = ()
    aggregates: typing.Tuple[Aggregate, ...] = ()
    servers: typing.Tuple[Server, ...] = ()
    groups: typing.Tuple[Group, ...] = ()
    stacks: typing.Tuple[Stack, ...] = ()
    holds: typing.Tuple[Hold, ...] = ()
    config: Config = Config()


class Surrogates:
    """Stable surrogates of names: ``<kind>-<12 hex>`` of an HMAC-SHA256
    of the name under ``key``, uuids as uuid5 in a namespace of the key.

    :param key: the secret; exports with the same key give the same
        surrogates.
    """

    def __init__(self, key: str = DEFAULT_KEY) -> None:
        self._key = key.encode()
        self._namespace = uuid.UUID(bytes=self._digest('namespace', '')[:16])

    def _digest(self, kind: str, name: str) -> bytes:
        return hmac.new(self._key, f'{kind}\0{name}'.encode(),
                        hashlib.sha256).digest()

    def name(self, kind: str, name: str) -> str:
        """The surrogate of a ``kind`` (host, aggregate...) named
        ``name``."""
        return f'{kind}-{self._digest(kind, name).hex()[:12]}'

    def uuid(self, value: str) -> str:
        """The surrogate of a uuid."""
        return str(uuid.uuid5(self._namespace, str(value)))


class _Plain:
    """No obfuscation: every name as it is."""

    @staticmethod
    def name(kind: str, name: str) -> str:
        return name

    @staticmethod
    def uuid(value: str) -> str:
        return value


def _word(name: str) -> str:
    """A scenario name: no white space."""
    return _SPACE.sub('_', name.strip()) or '_'


def unique(items: typing.Iterable[typing.Tuple[str, str]]
           ) -> typing.Dict[str, str]:
    """id -> a unique name: the name itself, or ``name-<first 8 of the
    id>`` for every item of a name several share (longer when even that
    clashes), so that a name is the same whatever else exists of it.

    :param items: (id, name) pairs.
    """
    items = [(i, _word(n)) for i, n in items]
    count: typing.Dict[str, int] = {}
    for _, name in items:
        count[name] = count.get(name, 0) + 1
    found: typing.Dict[str, str] = {}
    taken = {name for name, n in count.items() if n == 1}
    for id_, name in sorted(items, key=lambda p: (p[1], p[0])):
        if count[name] == 1:
            found[id_] = name
            continue
        short = id_.replace('-', '')
        for size in (8, 12, len(short)):
            candidate = f'{name}-{short[:size]}'
            if candidate not in taken:
                break
        taken.add(candidate)
        found[id_] = candidate
    return found


def _scopes(cloud: Cloud, names) -> typing.Dict[str, dict]:
    found = {}
    for record in cloud.scopes:
        settings: typing.Dict[str, typing.Any] = {}
        if record.allow_identifiers:
            settings['allow_identifiers'] = True
        if record.obfuscate_identifiers:
            settings['obfuscate_identifiers'] = True
        if record.obfuscate_identifiers and record.obfuscate_namespace_uuid:
            settings['namespace'] = names.uuid(
                record.obfuscate_namespace_uuid)
        if record.parent:
            settings['parent'] = record.parent
        found[record.name] = settings
    return found


def _hosts(cloud: Cloud, names) -> typing.List[dict]:
    found = []
    for host in sorted(cloud.hosts, key=lambda h: h.name):
        resources, reserved, details = {}, {}, {}
        for rc, inventory in sorted(host.inventories.items()):
            if inventory.total < 1 or inventory.allocation_ratio <= 0:
                continue    # nothing to allocate: no inventory to write
            resources[rc] = inventory.total
            if inventory.reserved:
                reserved[rc] = inventory.reserved
            if inventory.details:
                details[rc] = inventory.details
        if not resources:
            continue
        item = {'name': names.name('host', host.name),
                'resources': resources}
        if host.traits:
            item['traits'] = sorted(host.traits)
        if reserved:
            item['reserved'] = reserved
        if details:
            item['inventory'] = details
        found.append(item)
    return found


def _aggregates(cloud: Cloud, hosts: typing.AbstractSet[str], names
                ) -> typing.List[dict]:
    unique_names = unique((a.uuid, a.name) for a in cloud.aggregates)
    found = []
    for agg in sorted(cloud.aggregates,
                      key=lambda a: (unique_names[a.uuid], a.uuid)):
        item: typing.Dict[str, typing.Any] = {
            'name': names.name('aggregate', unique_names[agg.uuid]),
            'uuid': names.uuid(agg.uuid)}
        if agg.scope:
            item['scope'] = agg.scope
        item['hosts'] = sorted(names.name('host', h)
                               for h in set(agg.hosts) & hosts)
        if agg.metadata:
            item['metadata'] = dict(sorted(agg.metadata.items()))
        found.append(item)
    return found


def _topology(cloud: Cloud, names) -> topo.Topology:
    """The scopes and domains as the scenario has them (surrogate uuids
    and namespaces when obfuscating): tenants' identifiers are computed
    on it."""
    def surrogate(record):
        namespace = record.obfuscate_namespace_uuid
        return dataclasses.replace(record, obfuscate_namespace_uuid=(
            names.uuid(namespace) if namespace else None))
    scopes = [topo.scope_from_record(surrogate(r)) for r in cloud.scopes]
    domains = [topo.Domain(names.uuid(a.uuid), a.name, a.scope)
               for a in cloud.aggregates if a.scope]
    return topo.build(scopes, domains)


def _worded(document: PolicyDocument, topology: topo.Topology,
            project: str, names) -> dict:
    """A group's ``policies`` and ``rules`` as its tenant writes them in
    the scenario (its identifiers of the scenario's domains)."""
    real = dataclasses.replace(document, name=None, policies=tuple(
        p.with_identifier(names.uuid(p.identifier))
        if p.identifier is not None and topology.scope(p.scope) is not None
        else p for p in document.policies))
    shown = identifiers.to_tenant(real, topology, project).to_dict()
    found = {'policies': shown['policies']}
    if shown['rules']:
        found['rules'] = shown['rules']
    return found


Retarget = typing.Callable[[typing.Sequence[str]], typing.List[str]]
"""A stack's policies as its tenant wrote them -> as the scenario's
tenant writes them (its identifiers of the scenario's domains)."""


def _retarget(real_topology: topo.Topology, topology: topo.Topology,
              project: str, shown: str, names) -> Retarget:
    """:data:`Retarget` for a stack of ``project`` (``shown`` in the
    scenario): a targeted domain is read with the real scopes, then
    written with the scenario's (surrogate uuids and namespaces when
    obfuscating), as a group's policies are (:func:`_worded`)."""
    def retarget(policies: typing.Sequence[str]) -> typing.List[str]:
        try:
            document = parser.parse_document({'policies': list(policies)})
        except PolicyError:
            return list(policies)   # the service stored it: leave it
        if not any(p.identifier for p in document.policies):
            return list(policies)
        real = identifiers.to_real(document, real_topology, project,
                                   strict=False)
        return _worded(real, topology, shown, names)['policies']
    return retarget


def _stack(document: typing.Mapping[str, typing.Any], name: str,
           group_names: typing.Mapping[str, str],
           server_names: typing.Mapping[str, str],
           project: str, names, retarget: Retarget) -> dict:
    """A stack of the scenario: its document's keys with its project, the
    existing ends of its relationships named as the scenario names them,
    its names made surrogates and its targeted domains retargeted when
    obfuscating."""
    body = dict(document.get('stack', document))
    body['name'] = names.name('stack', name)
    if 'group' in body:
        body['group'] = _stack_group(body['group'], names, retarget)
    relationships = []
    for rel in body.get('relationships') or ():
        rel = dict(rel)
        if rel.get('policies'):
            rel['policies'] = retarget(rel['policies'])
        for end in ('from', 'to'):
            target = rel.get(end)
            if isinstance(target, str):
                rel[end] = names.name('group', target)
            elif isinstance(target, dict) and len(target) == 1:
                (kind, ref), = target.items()
                known = (group_names if kind == 'server_group'
                         else server_names).get(str(ref))
                if known is None:
                    break   # an end the export does not hold
                rel[end] = {kind: known}
        else:
            relationships.append(rel)
    if 'relationships' in body:
        body['relationships'] = relationships
    body['project'] = project
    return body


def _stack_group(group: typing.Mapping[str, typing.Any], names,
                 retarget: Retarget) -> dict:
    """A stack's group tree, its group and server names as surrogates
    and its targeted domains retargeted when obfuscating."""
    found = dict(group)
    if 'name' in found:
        found['name'] = names.name('group', str(found['name']))
    if found.get('policies'):
        found['policies'] = retarget(found['policies'])
    if 'members' in found:
        found['members'] = [_stack_group(m, names, retarget)
                            for m in found['members'] or ()]
    servers = found.get('servers')
    if isinstance(servers, dict) and 'names' in servers:
        found['servers'] = dict(servers, names=[
            names.name('server', str(n)) for n in servers['names'] or ()])
    return found


def scenario(cloud: Cloud, project: typing.Optional[str] = None,
             surrogates: typing.Optional[Surrogates] = None) -> dict:
    """The scenario document of ``cloud`` (simulation.md).

    :param cloud: what was read.
    :param project: only this project's servers, groups and stacks are
        named; the other projects' servers stay as load without names.
    :param surrogates: replace names with these surrogates; None keeps
        the real names (the administrator's view).
    """
    names = surrogates or _Plain()
    hosts = _hosts(cloud, names)
    written = {h['name'] for h in hosts}
    host_names = {h.name for h in cloud.hosts
                  if names.name('host', h.name) in written}
    document: typing.Dict[str, typing.Any] = {
        'scopes': _scopes(cloud, names)}
    config = cloud.config.scenario()
    if config:
        document['config'] = config
    document.update(aggregates=_aggregates(cloud, host_names, names),
                    hosts=hosts)
    topology = _topology(cloud, names)

    def mine(owner: str) -> bool:
        return project is None or owner == project

    groups = [g for g in cloud.groups if mine(g.project)]
    group_names = unique((g.uuid, g.name) for g in groups)
    document['groups'] = []
    for group in sorted(groups, key=lambda g: group_names[g.uuid]):
        owner = names.name('project', group.project)
        document['groups'].append(dict(
            {'name': names.name('group', group_names[group.uuid]),
             'project': owner},
            **_worded(group.document, topology, owner, names)))
    running = [s for s in cloud.servers
               if s.host in host_names and any(s.resources.values())]
    named = [s for s in running if mine(s.project)]
    server_names = unique((s.uuid, s.name) for s in named)
    servers = []
    for server in sorted(named, key=lambda s: server_names[s.uuid]):
        item = {'name': names.name('server', server_names[server.uuid]),
                'host': names.name('host', server.host),
                'project': names.name('project', server.project)}
        if server.group in group_names:
            item['group'] = names.name('group', group_names[server.group])
        item['flavor'] = {'resources': _resources(server)}
        servers.append(item)
    others = sorted((s for s in running if not mine(s.project)),
                    key=lambda s: (s.host, s.uuid))
    taken = {item['name'] for item in servers}
    loads = (f'{LOAD}-{i}' for i in itertools.count(1))
    for server in others:
        # a project's own server may be named load-1: the load is not
        name = next(n for n in loads if n not in taken)
        servers.append({'name': name,
                        'host': names.name('host', server.host),
                        'flavor': {'resources': _resources(server)}})
    document['servers'] = servers
    shown_groups = {u: names.name('group', n) for u, n in group_names.items()}
    shown_servers = {u: names.name('server', n)
                     for u, n in server_names.items()}
    stacks = [s for s in cloud.stacks if mine(s.project)]
    stack_names = unique((s.id, s.name) for s in stacks)
    real_topology = _topology(cloud, _Plain())
    written_stacks = {
        s.id: _stack(s.document, stack_names[s.id], shown_groups,
                     shown_servers, names.name('project', s.project), names,
                     _retarget(real_topology, topology, s.project,
                               names.name('project', s.project), names))
        for s in stacks}
    document['holds'] = _holds(cloud, host_names, mine, {
        s.id: (s.document, written_stacks[s.id]) for s in stacks}, names)
    document['stacks'] = [written_stacks[s.id] for s in sorted(
        stacks, key=lambda s: stack_names[s.id])]
    return document


def _holds(cloud: Cloud, host_names: typing.AbstractSet[str],
           mine: typing.Callable[[str], bool],
           stacks: typing.Mapping[str, typing.Tuple[typing.Mapping, dict]],
           names) -> typing.List[dict]:
    """The scenario's ``holds``: each hold on a host of the export, with
    its stack and server as the scenario names them where the stack is
    written, its project where the project's names are."""
    found = []
    for hold in sorted(cloud.holds, key=lambda h: (h.host, h.consumer)):
        resources = {rc: n for rc, n in sorted(hold.resources.items())
                     if n > 0}
        if hold.host not in host_names or not resources:
            continue
        item: typing.Dict[str, typing.Any] = {
            'host': names.name('host', hold.host), 'resources': resources}
        if mine(hold.project):
            if hold.stack in stacks:
                real, written = stacks[hold.stack]
                item['stack'] = written['name']
                shown = dict(zip(
                    _server_names(real.get('stack', real).get('group')),
                    _server_names(written.get('group'))))
                if hold.server in shown:
                    item['server'] = shown[hold.server]
            item['project'] = names.name('project', hold.project)
        found.append(item)
    return found


def _server_names(group: typing.Any) -> typing.List[str]:
    """The servers of a stack document's group tree, in the stack's
    order (a leaf's ``names``, or ``<group>-1`` ... ``<group>-<count>``,
    as :mod:`.stacks.model` names them)."""
    if not isinstance(group, dict):
        return []
    servers = group.get('servers')
    if isinstance(servers, dict):
        if isinstance(servers.get('names'), list):
            return [str(n) for n in servers['names']]
        count = servers.get('count')
        return [f'{group.get("name")}-{i}' for i in range(1, count + 1)] \
            if isinstance(count, int) else []
    return [name for member in group.get('members') or ()
            for name in _server_names(member)]


def _resources(server: Server) -> typing.Dict[str, int]:
    return {rc: n for rc, n in sorted(server.resources.items()) if n > 0}
