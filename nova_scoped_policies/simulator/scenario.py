"""Load and validate simulation scenarios (shared/contracts/simulation.md).

Every error is a :class:`ScenarioError` naming the key path, e.g.
``requests[2].boot.count: 0: must be an integer >= 1``; nothing runs until
the whole scenario is valid.
"""

import dataclasses
import re
import typing
import uuid

import os_resource_classes as orc
import yaml

from nova_scoped_policies.engine import forbidden_aggregates
from nova_scoped_policies.policy import parser
from nova_scoped_policies.policy import PolicyDocument
from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.stacks import model as stack_model
from nova_scoped_policies import topology as topo

_NS = uuid.UUID('0a3cfbb8-8f64-4e2c-9d1e-5b0c1f4e6a77')
SIMULATOR_OPTIONS = ('store_driver', 'store_cache_ttl')
"""[scoped_policies] options the simulator sets itself."""
TOP_KEYS = ('scopes', 'aggregates', 'hosts', 'generate', 'config', 'groups',
            'stacks', 'requests')
DEFAULT_PROJECT = 'demo'
_CUSTOM_RC = re.compile(r'^CUSTOM_[A-Z0-9_]+$')


class ScenarioError(ValueError):
    """A malformed scenario.

    :param path: the key path, e.g. ``requests[2].boot.count``.
    :param problem: what is wrong.
    """

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        super().__init__(f'{path}: {problem}' if path else problem)


def stable_uuid(kind: str, name: str) -> str:
    """A uuid derived from a name: the same scenario, the same ids."""
    return str(uuid.uuid5(_NS, f'{kind}:{name}'))


@dataclasses.dataclass(frozen=True)
class Host:
    name: str
    resources: typing.Mapping[str, int]
    traits: typing.Tuple[str, ...] = ()

    @property
    def uuid(self) -> str:
        return stable_uuid('host', self.name)


@dataclasses.dataclass(frozen=True)
class Group:
    name: str
    project: str
    document: PolicyDocument

    @property
    def uuid(self) -> str:
        return stable_uuid('group', self.name)


@dataclasses.dataclass(frozen=True)
class Boot:
    name: str
    group: typing.Optional[str]
    count: int
    project: str
    resources: typing.Mapping[str, int]
    extra_specs: typing.Mapping[str, str]
    image_properties: typing.Mapping[str, str]

    @property
    def servers(self) -> typing.List[str]:
        return [f'{self.name}-{i}' for i in range(1, self.count + 1)]


@dataclasses.dataclass(frozen=True)
class Delete:
    server: str


@dataclasses.dataclass(frozen=True)
class Membership:
    group: str
    server: str
    add: bool


@dataclasses.dataclass(frozen=True)
class UpdateGroup:
    group: str
    document: PolicyDocument


@dataclasses.dataclass(frozen=True)
class StackEntry:
    """A stack of the scenario: its validated document and tenant."""

    name: str
    project: str
    stack: stack_model.Stack


@dataclasses.dataclass(frozen=True)
class PlanRequest:
    """``plan`` (decide and hold), ``boot_plan`` or ``confirm``."""

    kind: str
    stack: str


PLAN_KINDS = ('plan', 'boot_plan', 'confirm')

Request = typing.Union[Boot, Delete, Membership, UpdateGroup, PlanRequest]


@dataclasses.dataclass(frozen=True)
class Scenario:
    hosts: typing.Tuple[Host, ...]
    aggregates: typing.Tuple[topo.AggregateInfo, ...]
    scopes: typing.Tuple[topo.Scope, ...]
    config: typing.Mapping[str, typing.Any]
    groups: typing.Mapping[str, Group]
    requests: typing.Tuple[typing.Tuple[str, Request], ...]
    stacks: typing.Mapping[str, StackEntry] = dataclasses.field(
        default_factory=dict)

    def topology(self) -> topo.Topology:
        domains = [topo.Domain(a.uuid, a.name, a.metadata['policy_scope'],
                               frozenset(a.hosts))
                   for a in self.aggregates if 'policy_scope' in a.metadata]
        return topo.build(self.scopes, domains)


def _expect(path, value, kind, what):
    if not isinstance(value, kind) or (kind is int and isinstance(value,
                                                                  bool)):
        raise ScenarioError(path, f'{value!r}: must be {what}')
    return value


def _keys(path, data, allowed, required=()):
    _expect(path, data, dict, 'a mapping')
    for key in data:
        if key not in allowed:
            raise ScenarioError(f'{path}.{key}' if path else str(key),
                                'unknown key; expected one of '
                                + ', '.join(allowed))
    for key in required:
        if key not in data:
            raise ScenarioError(f'{path}.{key}' if path else key,
                                'is required')
    return data


def _positive(path, value):
    _expect(path, value, int, 'an integer >= 1')
    if value < 1:
        raise ScenarioError(path, f'{value!r}: must be an integer >= 1')
    return value


def _name(path, value):
    _expect(path, value, str, 'a non-empty string')
    if not value or any(c.isspace() for c in value):
        raise ScenarioError(path, f'{value!r}: must be a non-empty string '
                            'without spaces')
    return value


def _resources(path, data):
    _expect(path, data, dict, 'a mapping of resource class to amount')
    if not data:
        raise ScenarioError(path, 'needs at least one resource class')
    for rc, amount in data.items():
        if not isinstance(rc, str) or not (
                rc in orc.STANDARDS or _CUSTOM_RC.match(rc)):
            raise ScenarioError(f'{path}.{rc}', 'neither a standard '
                                'resource class (VCPU, MEMORY_MB, DISK_GB, '
                                '...) nor CUSTOM_[A-Z0-9_]+')
        _positive(f'{path}.{rc}', amount)
    return dict(data)


def _strings(path, data):
    _expect(path, data, dict, 'a mapping of strings')
    out = {}
    for key, value in data.items():
        if not isinstance(key, str) or isinstance(value, (dict, list)):
            raise ScenarioError(f'{path}.{key}', 'keys and values must be '
                                'strings')
        out[key] = str(value).lower() if isinstance(value, bool) \
            else str(value)
    return out


def _document(path, data, drop=()):
    try:
        return parser.parse_document(
            {k: v for k, v in data.items() if k not in drop}, prefix=path)
    except PolicyError as exc:
        raise ScenarioError(exc.field, f'{exc.value!r}: {exc.problem}')


def _scopes(data):
    scopes = {}
    for name, settings in (data or {}).items():
        path = f'scopes.{name}'
        try:
            parser.validate_scope_name(path, name)
        except PolicyError as exc:
            raise ScenarioError(path, exc.problem)
        if name == 'host':
            raise ScenarioError(path, 'host is the implicit scope')
        settings = _keys(path, settings or {}, (
            'allow_identifiers', 'obfuscate_identifiers', 'namespace',
            'parent'))
        parent = settings.get('parent')
        if parent is not None:
            _expect(f'{path}.parent', parent, str, 'a scope name')
        for flag in ('allow_identifiers', 'obfuscate_identifiers'):
            _expect(f'{path}.{flag}', settings.get(flag, False), bool,
                    'true or false')
        namespace = settings.get('namespace')
        if namespace is not None:
            try:
                namespace = uuid.UUID(str(namespace))
            except ValueError:
                raise ScenarioError(f'{path}.namespace',
                                    f'{namespace!r}: must be a uuid')
        elif settings.get('obfuscate_identifiers'):
            # reproducible stand-in for the random namespace of a real scope
            namespace = uuid.UUID(stable_uuid('scope', name))
        scopes[name] = topo.Scope(
            name, settings.get('allow_identifiers', False),
            settings.get('obfuscate_identifiers', False), namespace, parent)
    for name, scope in scopes.items():
        if scope.parent is not None and scope.parent not in scopes:
            raise ScenarioError(f'scopes.{name}.parent',
                                f'{scope.parent!r}: no such scope')
    return scopes


def _stacks(data, groups):
    """The ``stacks:`` section: stack documents in YAML, with a ``project``.
    A relationship may name a scenario group (``{server_group: NAME}``) or
    server (``{server: NAME}``) where the API takes uuids."""
    out: typing.Dict[str, StackEntry] = {}
    for i, item in enumerate(_expect('stacks', data or [], list,
                                     'a list of stacks')):
        path = f'stacks[{i}]'
        body = dict(_expect(path, item, dict, 'a mapping'))
        project = _name(f'{path}.project',
                        body.pop('project', DEFAULT_PROJECT))
        for rel in body.get('relationships') or ():
            target = rel.get('to') if isinstance(rel, dict) else None
            if isinstance(target, dict) and len(target) == 1:
                (kind, name), = target.items()
                if kind == 'server_group' and name in groups:
                    rel['to'] = {kind: groups[name].uuid}
                elif kind == 'server' and isinstance(name, str) and \
                        not _looks_like_uuid(name):
                    rel['to'] = {kind: stable_uuid('server', name)}
        try:
            stack = stack_model.parse({'stack': body})
        except stack_model.StackError as exc:
            raise ScenarioError(_stack_path(path, exc.field), exc.message)
        if stack.name in out:
            raise ScenarioError(f'{path}.name',
                                f'{stack.name!r}: stack exists already')
        out[stack.name] = StackEntry(stack.name, project, stack)
    return out


def _stack_path(path: str, field: str) -> str:
    """``stack.group.name`` of a stack document -> ``stacks[i].group.name``.
    """
    if field.startswith('stack.'):
        return f'{path}.{field[len("stack."):]}'
    return f'{path}: {field}' if field != 'stack' else path


def _looks_like_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _hosts(data, generate):
    hosts = []
    for i, item in enumerate(data or []):
        path = f'hosts[{i}]'
        _keys(path, item, ('name', 'resources', 'traits'),
              ('name', 'resources'))
        traits = item.get('traits', [])
        _expect(f'{path}.traits', traits, list, 'a list of trait names')
        for j, trait in enumerate(traits):
            if not isinstance(trait, str) or \
                    not forbidden_aggregates.valid_trait(trait):
                raise ScenarioError(f'{path}.traits[{j}]', f'{trait!r}: '
                                    'neither a standard trait nor '
                                    'CUSTOM_[A-Z0-9_]+')
        hosts.append(Host(_name(f'{path}.name', item['name']),
                          _resources(f'{path}.resources', item['resources']),
                          tuple(traits)))
    generated_scopes = {}
    if generate is not None:
        _keys('generate', generate, ('hosts', 'scopes'), ('hosts',))
        spec = _keys('generate.hosts', generate['hosts'],
                     ('count', 'prefix', 'resources'),
                     ('count', 'resources'))
        count = _positive('generate.hosts.count', spec['count'])
        prefix = _name('generate.hosts.prefix', spec.get('prefix', 'n'))
        resources = _resources('generate.hosts.resources',
                               spec['resources'])
        hosts += [Host(f'{prefix}{k}', resources)
                  for k in range(1, count + 1)]
        for scope, n in _expect('generate.scopes',
                                generate.get('scopes', {}), dict,
                                'a mapping of scope to domain count').items():
            generated_scopes[scope] = _positive(f'generate.scopes.{scope}', n)
    seen: typing.Set[str] = set()
    for i, host in enumerate(hosts):
        if host.name in seen:
            raise ScenarioError(f'hosts[{i}].name' if i < len(data or [])
                                else 'generate.hosts',
                                f'{host.name!r}: host defined twice')
        seen.add(host.name)
    if not hosts:
        raise ScenarioError('hosts', 'the scenario needs hosts (hosts or '
                            'generate.hosts)')
    return hosts, generated_scopes


def _aggregates(data, scopes, hosts, generated_scopes):
    known = {h.name for h in hosts}
    aggregates = []
    for i, item in enumerate(data or []):
        path = f'aggregates[{i}]'
        _keys(path, item, ('name', 'uuid', 'scope', 'hosts', 'metadata'),
              ('name',))
        name = _name(f'{path}.name', item['name'])
        agg_uuid = item.get('uuid') or stable_uuid('aggregate', name)
        try:
            agg_uuid = str(uuid.UUID(str(agg_uuid)))
        except ValueError:
            raise ScenarioError(f'{path}.uuid', f'{agg_uuid!r}: not a uuid')
        metadata = _strings(f'{path}.metadata', item.get('metadata', {}))
        if 'scope' in item:
            if item['scope'] not in scopes:
                raise ScenarioError(f'{path}.scope', f'{item["scope"]!r}: '
                                    'not declared under scopes')
            metadata['policy_scope'] = item['scope']
        members = _expect(f'{path}.hosts', item.get('hosts', []), list,
                          'a list of host names')
        for j, host in enumerate(members):
            if host not in known:
                raise ScenarioError(f'{path}.hosts[{j}]',
                                    f'{host!r}: no such host')
        aggregates.append(topo.AggregateInfo(agg_uuid, name, tuple(members),
                                             metadata))
    ordered = [h.name for h in hosts]
    for scope, n in generated_scopes.items():
        if scope not in scopes:
            raise ScenarioError(f'generate.scopes.{scope}',
                                'not declared under scopes')
        if n > len(ordered):
            raise ScenarioError(f'generate.scopes.{scope}',
                                f'{n} domains for {len(ordered)} hosts')
        for k in range(n):
            part = ordered[k * len(ordered) // n:(k + 1) * len(ordered) // n]
            name = f'{scope}-{k + 1}'
            aggregates.append(topo.AggregateInfo(
                stable_uuid('aggregate', name), name, tuple(part),
                {'policy_scope': scope}))
    names: typing.Set[str] = set()
    uuids: typing.Set[str] = set()
    for i, agg in enumerate(aggregates):
        if agg.name in names or agg.uuid in uuids:
            raise ScenarioError(f'aggregates[{i}]', f'{agg.name!r}: '
                                'aggregate name or uuid defined twice')
        names.add(agg.name)
        uuids.add(agg.uuid)
    return aggregates


def _config(data):
    from nova_scoped_policies.conf import scheduler as sched_conf
    opts = {o.dest: o for o in sched_conf.scheduler_opts}
    config = {}
    for key, value in _expect('config', data or {}, dict,
                              'a mapping of option to value').items():
        if key not in opts:
            raise ScenarioError(f'config.{key}', 'unknown option; expected '
                                'one of ' + ', '.join(sorted(opts)))
        if key in SIMULATOR_OPTIONS:
            raise ScenarioError(f'config.{key}', 'the simulator sets it: it '
                                'keeps the groups in its own policy store')
        try:
            config[key] = opts[key].type(value)
        except (ValueError, TypeError) as exc:
            raise ScenarioError(f'config.{key}', f'{value!r}: {exc}')
    return config


def _groups(data):
    groups = {}
    for i, item in enumerate(_expect('groups', data or [], list,
                                     'a list of groups')):
        path = f'groups[{i}]'
        _keys(path, item, ('name', 'project', 'policies', 'rules', 'llmn',
                           'policy'), ('name',))
        name = _name(f'{path}.name', item['name'])
        if name in groups:
            raise ScenarioError(f'{path}.name', f'{name!r}: defined twice')
        project = _name(f'{path}.project',
                        item.get('project', DEFAULT_PROJECT))
        groups[name] = Group(name, project, _document(
            path, item, drop=('name', 'project')))
    return groups


def _requests(data, groups, stacks=None):
    stacks = stacks or {}
    out = []
    servers: typing.Set[str] = set()
    for i, item in enumerate(_expect('requests', data or [], list,
                                     'a list of requests')):
        path = f'requests[{i}]'
        _expect(path, item, dict, 'a mapping with one key')
        if len(item) != 1:
            raise ScenarioError(path, 'one of boot, delete, add_member, '
                                'remove_member, update_group, plan, '
                                'boot_plan, confirm per request')
        (kind, body), = item.items()
        path = f'{path}.{kind}'
        if kind == 'boot':
            request = _boot(path, body, groups)
            for server in request.servers:
                if server in servers:
                    raise ScenarioError(f'{path}.name',
                                        f'server {server!r} exists already')
                servers.add(server)
        elif kind == 'delete':
            server = _name(path, body)
            if server not in servers:
                raise ScenarioError(path, f'{server!r}: no such server')
            servers.discard(server)
            request = Delete(server)
        elif kind in ('add_member', 'remove_member'):
            _keys(path, body, ('group', 'server'), ('group', 'server'))
            group = _group_ref(f'{path}.group', body['group'], groups)
            server = _name(f'{path}.server', body['server'])
            if server not in servers:
                raise ScenarioError(f'{path}.server',
                                    f'{server!r}: no such server')
            request = Membership(group, server, kind == 'add_member')
        elif kind in PLAN_KINDS:
            _keys(path, body, ('stack',), ('stack',))
            name = body['stack']
            if name not in stacks:
                raise ScenarioError(f'{path}.stack',
                                    f'{name!r}: no such stack')
            request = PlanRequest(kind, name)
            if kind == 'boot_plan':
                for server in stacks[name].stack.servers:
                    if server.name in servers:
                        raise ScenarioError(path, f'server {server.name!r} '
                                            'exists already')
                    servers.add(server.name)
        elif kind == 'update_group':
            _keys(path, body, ('group', 'policies', 'rules', 'llmn',
                               'policy'), ('group',))
            request = UpdateGroup(
                _group_ref(f'{path}.group', body['group'], groups),
                _document(path, body, drop=('group',)))
        else:
            raise ScenarioError(path, 'unknown request; expected boot, '
                                'delete, add_member, remove_member, '
                                'update_group, plan, boot_plan or confirm')
        out.append((path, request))
    return out


def _group_ref(path, name, groups):
    if name not in groups:
        raise ScenarioError(path, f'{name!r}: no such group')
    return name


def _boot(path, body, groups):
    _keys(path, body, ('name', 'group', 'count', 'project', 'flavor',
                       'image'), ('name', 'flavor'))
    group = body.get('group')
    if group is not None:
        _group_ref(f'{path}.group', group, groups)
    flavor = _keys(f'{path}.flavor', body['flavor'],
                   ('resources', 'extra_specs'), ('resources',))
    image = _keys(f'{path}.image', body.get('image') or {},
                  ('properties',))
    project = body.get('project') or (groups[group].project if group
                                      else DEFAULT_PROJECT)
    return Boot(
        _name(f'{path}.name', body['name']), group,
        _positive(f'{path}.count', body.get('count', 1)),
        _name(f'{path}.project', project),
        _resources(f'{path}.flavor.resources', flavor['resources']),
        _strings(f'{path}.flavor.extra_specs', flavor.get('extra_specs', {})),
        _strings(f'{path}.image.properties', image.get('properties', {})))


def parse(data: object) -> Scenario:
    """Validate a decoded scenario.

    :param data: the scenario as loaded from YAML.
    :raises ScenarioError: naming the first bad key.
    """
    _keys('', data, TOP_KEYS)
    scopes = _scopes(_expect('scopes', data.get('scopes') or {}, dict,
                             'a mapping of scope name to settings'))
    hosts, generated = _hosts(_expect('hosts', data.get('hosts') or [], list,
                                      'a list of hosts'),
                              data.get('generate'))
    aggregates = _aggregates(_expect('aggregates',
                                     data.get('aggregates') or [], list,
                                     'a list of aggregates'),
                             scopes, hosts, generated)
    groups = _groups(data.get('groups'))
    stacks = _stacks(data.get('stacks'), groups)
    scenario = Scenario(tuple(hosts), tuple(aggregates),
                        tuple(scopes.values()), _config(data.get('config')),
                        groups, tuple(_requests(data.get('requests'),
                                                groups, stacks)), stacks)
    _as_the_policy_service_would(scenario)
    return scenario


def _as_the_policy_service_would(scenario: Scenario) -> None:
    """What the policy service refuses: a domain identifier the group's
    project cannot target, and an instance added to two groups."""
    topology = scenario.topology()
    documents = [(f'groups[{i}]', g.project, g.document)
                 for i, g in enumerate(scenario.groups.values())]
    documents += [(path, scenario.groups[r.group].project, r.document)
                  for path, r in scenario.requests
                  if isinstance(r, UpdateGroup)]
    for path, project, document in documents:
        _scopes_defined(path, document, topology)
        try:
            topology.to_real(document, project)
        except PolicyError as exc:
            raise ScenarioError(exc.field, f'{exc.value!r}: {exc.problem}')
    for i, entry in enumerate(scenario.stacks.values()):
        try:
            stack_model.check_topology(entry.stack, topology)
        except stack_model.StackError as exc:
            raise ScenarioError(_stack_path(f'stacks[{i}]', exc.field),
                                exc.message)
    # server -> its groups; server -> the group it was added to
    groups: typing.Dict[str, typing.Set[str]] = {}
    added: typing.Dict[str, str] = {}
    for path, request in scenario.requests:
        if isinstance(request, Boot) and request.group:
            for server in request.servers:
                groups[server] = {request.group}
        elif isinstance(request, Membership):
            mine = groups.setdefault(request.server, set())
            if request.add and request.group not in mine:
                owner = added.get(request.server)
                if owner is not None:
                    raise ScenarioError(
                        f'{path}.server', f'{request.server!r}: added to '
                        f'group {owner!r} already; an instance is in at most '
                        'one group of the policy service (remove_member it '
                        'first)')
                added[request.server] = request.group
                mine.add(request.group)
            elif not request.add and request.group in mine:
                mine.discard(request.group)
                if added.get(request.server) == request.group:
                    del added[request.server]
        elif isinstance(request, Delete):
            groups.pop(request.server, None)
            added.pop(request.server, None)


def _scopes_defined(path: str, document: PolicyDocument,
                    topology: topo.Topology) -> None:
    """A policy or rule on a scope the scenario does not define is refused,
    as the policy service refuses it."""
    for i, policy in enumerate(document.policies):
        if topology.scope(policy.scope) is None:
            raise ScenarioError(document.field_of(i), f'{str(policy)!r}: '
                                f'unknown scope {policy.scope!r}; define it '
                                'under scopes')
    unknown = sorted(document.scopes - set(topology.scope_names))
    if unknown:
        rules = document.rules.to_dict()
        key = next((k for k in sorted(rules) if k in (
            f'max_server_per_{unknown[0]}', f'min_domains_{unknown[0]}')),
            None)
        raise ScenarioError(f'{path}.rules.{key}' if key else path,
                            f'unknown scope {unknown[0]!r}; define it '
                            'under scopes')


def load(path: str) -> Scenario:
    """Read and validate a scenario file.

    :raises ScenarioError: unreadable YAML or a bad key.
    """
    try:
        with open(path, encoding='utf-8') as handle:
            data = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError('', f'cannot read the scenario: {exc}')
    return parse(data)
