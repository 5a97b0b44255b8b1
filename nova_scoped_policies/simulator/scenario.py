"""Load and validate simulation scenarios (shared/contracts/simulation.md).

Every error is a :class:`ScenarioError` naming the key path, e.g.
``requests[2].boot.count: 0: must be an integer >= 1``; nothing runs until
the whole scenario is valid.
"""

import dataclasses
import difflib
import functools
import importlib
import math
import re
import typing
import uuid

import orjson
import os_resource_classes as orc
import yaml

from nova_scoped_policies.engine import admission
from nova_scoped_policies.engine import forbidden_aggregates
from nova_scoped_policies.policy import parser
from nova_scoped_policies.policy import PolicyDocument
from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.policy import shown
from nova_scoped_policies.simulator import checked
from nova_scoped_policies.stacks import model as stack_model
from nova_scoped_policies.stacks import solver
from nova_scoped_policies import topology as topo
from nova_scoped_policies import validation

_NS = uuid.UUID('0a3cfbb8-8f64-4e2c-9d1e-5b0c1f4e6a77')
SIMULATOR_OPTIONS = ('store_driver', 'store_cache_ttl')
"""[scoped_policies] options the simulator sets itself."""
DEFAULT_PROJECT = 'demo'
_CUSTOM_RC = re.compile(r'^CUSTOM_[A-Z0-9_]+$')


class ScenarioError(ValueError):
    """A malformed scenario.

    :param path: the key path, e.g. ``requests[2].boot.count``.
    :param problem: what is wrong.
    """

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        super().__init__(validation.one_line(
            f'{path}: {problem}' if path else problem))


MAX_AMOUNT = 0x7FFFFFFF
"""The largest amount of a resource class Placement holds (its inventories'
``total`` and allocations' amounts)."""
MAX_HOSTS = 1000000
"""Most hosts ``generate.hosts.count`` makes."""
MAX_SERVERS = 100000
"""Most servers one ``boot`` request starts."""
MAX_CASES = 1000000
"""Most cases one ``resilience`` request draws."""
_LONGEST_NAME = 255
_NAME = {'type': 'string', 'pattern': r'\A\S+\Z',
         'maxLength': _LONGEST_NAME,
         'x-problem': 'must be a non-empty string without spaces, of at '
                      f'most {_LONGEST_NAME} characters'}
_KEY = {'type': 'string', 'minLength': 1, 'maxLength': _LONGEST_NAME,
        'x-problem': 'a key must be a non-empty string of at most '
                     f'{_LONGEST_NAME} characters'}
_STRING = {'type': 'string', 'maxLength': _LONGEST_NAME,
           'x-problem': f'must be a string of at most {_LONGEST_NAME} '
                        'characters'}


def _integer(low, high, what=None):
    # JSON Schema's integers include 2.0: the parser makes them ints
    return {'type': 'integer', 'minimum': low, 'maximum': high,
            'x-problem': what or f'must be an integer >= {low} and <= '
                                 f'{high}'}


_POSITIVE = _integer(1, MAX_AMOUNT)
_RESOURCES = {'type': 'object', 'minProperties': 1, 'propertyNames': _KEY,
              'additionalProperties': _integer(1, MAX_AMOUNT),
              'x-problem': {
                  'type': 'must be a mapping of resource class to amount',
                  'minProperties': 'needs at least one resource class'}}
_AMOUNTS = {'type': 'object', 'propertyNames': _KEY,
            'additionalProperties': _integer(0, MAX_AMOUNT),
            'x-problem': {'type': 'must be a mapping of resource class to '
                                  'amount'}}
_STRINGS = {'type': 'object', 'propertyNames': _KEY,
            'additionalProperties': {
                'type': ['string', 'number', 'boolean', 'null'],
                'maxLength': _LONGEST_NAME,
                'x-problem': 'keys and values must be strings of at most '
                             f'{_LONGEST_NAME} characters'},
            'x-problem': {'type': 'must be a mapping of strings'}}
_BOOL = {'type': 'boolean', 'x-problem': 'must be true or false'}
_ANY = {}  # checked by the policy or stack parser, with its own paths


def _mapping(properties, required=(), what='a mapping', nullable=False):
    return {'type': ['object', 'null'] if nullable else 'object',
            'properties': properties, 'required': list(required),
            'propertyNames': _KEY, 'additionalProperties': False,
            'x-problem': {'type': f'must be {what}',
                          'additionalProperties': 'unknown key; expected '
                          'one of ' + ', '.join(properties)}}


def _list(items, what):
    return {'type': ['array', 'null'], 'items': items,
            'x-problem': {'type': f'must be {what}'}}


def _names(what):
    return {'type': 'array', 'items': _NAME,
            'x-problem': {'type': f'must be a list of {what}'}}


_INVENTORY = {'type': 'object', 'propertyNames': _KEY,
              'additionalProperties': _mapping({
                  # Placement's own bounds (its inventory schema)
                  'allocation_ratio': {
                      'type': 'number', 'exclusiveMinimum': 0,
                      'maximum': 3.40282e+38,
                      'x-problem': 'must be a number above 0'},
                  'min_unit': _POSITIVE, 'max_unit': _POSITIVE,
                  'step_size': _POSITIVE},
                  what='a mapping of Placement inventory fields'),
              'x-problem': {'type': 'must be a mapping of resource class '
                                    'to inventory fields'}}
_DOCUMENT = {'policies': _ANY, 'rules': _ANY, 'llmn': _ANY, 'policy': _ANY}
_REQUEST_KINDS = ('boot', 'delete', 'add_member', 'remove_member',
                  'update_group', 'plan', 'boot_plan', 'confirm',
                  'migrate', 'fail_host', 'repair', 'resilience')
_MEMBERSHIP = _mapping({'group': _NAME, 'server': _NAME},
                       ('group', 'server'))
_PLAN = _mapping({'stack': _NAME}, ('stack',))
_MIGRATE = _mapping({'server': _NAME, 'host': _NAME}, ('server',))
_FAIL_HOST = _mapping({'host': _NAME, 'server': _NAME})
_REPAIR = _mapping({'group': _NAME, 'stack': _NAME}, nullable=True)
_RESILIENCE = _mapping({
    'fail': _NAME, 'count': _integer(1, MAX_HOSTS),
    'cases': _integer(1, MAX_CASES),
    'seed': _integer(-2 ** 63, 2 ** 63 - 1, 'must be an integer'),
    'groups': dict(_names('group names'), minItems=1, **{'x-problem': {
        'type': 'must be a list of group names',
        'minItems': 'must name at least one group'}})},
    ('fail',))
_CONFIG = {'type': ['object', 'null'], 'propertyNames': _KEY,
           'x-problem': {'type': 'must be a mapping of option to value'}}
"""``config``'s shape; its options' values are typed by
:func:`_config_schema`."""
_SHAPE = _mapping({
    'scopes': {'type': ['object', 'null'], 'propertyNames': _KEY,
               'additionalProperties': _mapping({
                   'allow_identifiers': _BOOL, 'obfuscate_identifiers': _BOOL,
                   'namespace': dict(_STRING, **{
                       'x-problem': 'must be a uuid'}),
                   'parent': dict(_STRING, **{
                       'x-problem': 'must be a scope name'})},
                   what='a mapping of settings', nullable=True),
               'x-problem': {'type': 'must be a mapping of scope name to '
                             'settings'}},
    'aggregates': _list(_mapping({
        'name': _NAME, 'uuid': dict(_STRING, **{'x-problem': 'must be a '
                                                'uuid'}),
        'scope': _NAME, 'hosts': _names('host names'),
        'metadata': _STRINGS}, ('name',)), 'a list of aggregates'),
    'hosts': _list(_mapping({
        'name': _NAME, 'resources': _RESOURCES,
        'traits': {'type': 'array', 'items': _STRING, 'x-problem': {
            'type': 'must be a list of trait names'}},
        'reserved': _AMOUNTS, 'inventory': _INVENTORY},
        ('name', 'resources')), 'a list of hosts'),
    'generate': _mapping({
        'hosts': _mapping({'count': _integer(1, MAX_HOSTS),
                           'prefix': _NAME, 'resources': _RESOURCES},
                          ('count', 'resources')),
        'scopes': {'type': 'object', 'propertyNames': _KEY,
                   'additionalProperties': _integer(1, MAX_HOSTS),
                   'x-problem': {'type': 'must be a mapping of scope to '
                                 'domain count'}}}, ('hosts',),
        nullable=True),
    'config': _CONFIG,
    'groups': _list(_mapping(dict({'name': _NAME, 'project': _NAME},
                                  **_DOCUMENT), ('name',)),
                    'a list of groups'),
    'servers': _list(_mapping({
        'name': _NAME, 'host': _NAME, 'project': _NAME, 'group': _NAME,
        'flavor': _mapping({'resources': _RESOURCES}, ('resources',))},
        ('name', 'host', 'flavor')), 'a list of servers'),
    'holds': _list(_mapping({
        'host': _NAME, 'resources': _RESOURCES, 'stack': _NAME,
        'server': _NAME, 'project': _NAME}, ('host', 'resources')),
        'a list of holds'),
    'stacks': _list({'type': 'object', 'propertyNames': _KEY,
                     'properties': {'project': _NAME},
                     'x-problem': {'type': 'must be a mapping'}},
                    'a list of stacks'),
    'requests': _list({
        'type': 'object', 'minProperties': 1, 'maxProperties': 1,
        'properties': {
            'boot': _mapping({
                'name': _NAME, 'group': _NAME,
                'count': _integer(1, MAX_SERVERS),
                'project': _NAME,
                'flavor': _mapping({'resources': _RESOURCES,
                                    'extra_specs': _STRINGS},
                                   ('resources',)),
                'image': _mapping({'properties': _STRINGS},
                                  nullable=True)}, ('name', 'flavor')),
            'delete': _NAME,
            'add_member': _MEMBERSHIP, 'remove_member': _MEMBERSHIP,
            'update_group': _mapping(dict({'group': _NAME}, **_DOCUMENT),
                                     ('group',)),
            'plan': _PLAN, 'boot_plan': _PLAN, 'confirm': _PLAN,
            'migrate': _MIGRATE, 'fail_host': _FAIL_HOST,
            'repair': _REPAIR, 'resilience': _RESILIENCE},
        'propertyNames': _KEY, 'additionalProperties': False,
        'x-problem': {
            'type': 'must be a mapping with one key',
            'minProperties': f'one of {", ".join(_REQUEST_KINDS)} per '
                             'request',
            'maxProperties': f'one of {", ".join(_REQUEST_KINDS)} per '
                             'request',
            'additionalProperties': 'unknown request; expected '
                                    f'{", ".join(_REQUEST_KINDS)}'}},
        'a list of requests'),
}, what='a mapping')


@functools.lru_cache(maxsize=None)
def _options() -> typing.Tuple[typing.Mapping[str, typing.Any],
                               typing.Mapping[str, typing.Any]]:
    """The options ``config`` takes, as oslo.config registers them:
    ([scoped_policies]'s, nova's [filter_scheduler]'s), by name."""
    from nova.conf import scheduler as nova_conf
    from nova_scoped_policies.conf import scheduler as sched_conf
    return ({o.dest: o for o in sched_conf.scheduler_opts},
            {o.dest: o for o in nova_conf.filter_scheduler_opts})


def _config_schema() -> dict:
    """``config``: each option's value typed as oslo.config types it
    (:func:`validation.option_schema`), flat (a name both groups have is
    ours) or nova's under ``filter_scheduler``; unknown names are left
    to :func:`_config`, which suggests the closest."""
    ours, nova = _options()
    nested = {name: validation.option_schema(opt)
              for name, opt in nova.items()}
    flat = dict(nested)
    flat.update((name, validation.option_schema(opt))
                for name, opt in ours.items())
    flat['filter_scheduler'] = dict(_CONFIG, properties=nested, **{
        'x-problem': {'type': "must be a mapping of nova's "
                              '[filter_scheduler] option to value'}})
    return dict(_CONFIG, properties=flat)


@functools.lru_cache(maxsize=None)
def schema() -> dict:
    """The scenario's schema (shared/contracts/simulation.md), every value
    typed down to the leaves; names, references and policy documents are
    checked by :func:`parse`. Built on first use: ``config``'s part is
    read from the options oslo.config registers (nova's among them)."""
    return dict(_SHAPE, properties=dict(_SHAPE['properties'],
                                        config=_config_schema()))


@functools.lru_cache(maxsize=None)
def _validator() -> checked.Checked:
    return checked.Checked(schema())


def schema_error(data: object) -> typing.Optional[ScenarioError]:
    """What the schema refuses of ``data`` (its shallowest error), or
    None when its every value has a type its key takes."""
    error = _validator().first_error(data)
    return None if error is None else ScenarioError(
        *validation.describe(error))


def __getattr__(name: str) -> typing.Any:
    # SCHEMA: built on first use (see schema)
    if name == 'SCHEMA':
        return schema()
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def stable_uuid(kind: str, name: str) -> str:
    """A uuid derived from a name: the same scenario, the same ids."""
    return str(uuid.uuid5(_NS, f'{kind}:{name}'))


@dataclasses.dataclass(frozen=True)
class Host:
    """A host (a compute node and its resource provider).

    :param resources: resource class -> the inventory's total.
    :param traits: its traits.
    :param reserved: resource class -> the amount its inventory reserves
        (Placement's ``reserved``: never allocated; nova's compute node
        counts it as used).
    """

    name: str
    resources: typing.Mapping[str, int]
    traits: typing.Tuple[str, ...] = ()
    reserved: typing.Mapping[str, int] = dataclasses.field(
        default_factory=dict)
    inventory: typing.Mapping[str, typing.Mapping[str, typing.Any]] = \
        dataclasses.field(default_factory=dict)
    """Resource class -> Placement's other inventory fields the scenario
    gives (``allocation_ratio``, ``min_unit``, ``max_unit``,
    ``step_size``); Placement's defaults for the rest."""

    @functools.cached_property
    def uuid(self) -> str:
        return stable_uuid('host', self.name)

    def ratio(self, rc: str) -> float:
        """The allocation ratio of ``rc`` (nova's compute node reports
        the same: its HostState's ``cpu_allocation_ratio``...)."""
        return float(self.inventory.get(rc, {}).get('allocation_ratio',
                                                    1.0))

    def inventories(self) -> typing.Dict[str, dict]:
        """Resource class -> the inventory Placement is given."""
        return {rc: dict({'total': n, 'reserved': self.reserved.get(rc, 0)},
                         **self.inventory.get(rc, {}))
                for rc, n in self.resources.items()}

    def capacity(self, rc: str) -> int:
        """What Placement allocates of ``rc`` at most: ``int((total -
        reserved) x allocation_ratio)``."""
        return int((self.resources.get(rc, 0) - self.reserved.get(rc, 0))
                   * self.ratio(rc))

    def refuses(self, rc: str, amount: int) -> typing.Optional[str]:
        """Why Placement refuses an allocation of ``amount`` of ``rc``
        here whatever the usage (its inventory's ``min_unit``,
        ``max_unit``, ``step_size``), or None."""
        fields = self.inventory.get(rc, {})
        for field, bad in (('min_unit', lambda n: amount < n),
                           ('max_unit', lambda n: amount > n),
                           ('step_size', lambda n: amount % n)):
            if field in fields and bad(fields[field]):
                return (f'{field} of {self.name}\'s {rc} inventory is '
                        f'{fields[field]}: Placement refuses it')
        return None


@dataclasses.dataclass(frozen=True)
class Group:
    name: str
    project: str
    document: PolicyDocument

    @functools.cached_property
    def uuid(self) -> str:
        return stable_uuid('group', self.name)


@dataclasses.dataclass(frozen=True)
class Running:
    """A server already running (``servers:``): placed at its host as
    it is, not scheduled.

    :param name: the server.
    :param host: where it runs.
    :param project: its tenant.
    :param group: the scenario group Nova booted it into, if any.
    :param resources: what its allocation takes.
    """

    name: str
    host: str
    project: str
    group: typing.Optional[str]
    resources: typing.Mapping[str, int]


@dataclasses.dataclass(frozen=True)
class Held:
    """Capacity a stack decision holds in Placement (``holds:``): taken
    before the first request, for the whole scenario, as a running cloud
    holds it until the servers boot or the lease ends.

    :param host: where it is held.
    :param resources: what it takes.
    :param project: the tenant it is held for.
    :param stack: the scenario stack whose decision holds it, if known.
    :param server: that stack's server it is held for, if known.
    """

    host: str
    resources: typing.Mapping[str, int]
    project: str
    stack: typing.Optional[str] = None
    server: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Boot:
    kind: typing.ClassVar[str] = 'boot'
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
    kind: typing.ClassVar[str] = 'delete'
    server: str


@dataclasses.dataclass(frozen=True)
class Membership:
    group: str
    server: str
    add: bool

    @property
    def kind(self) -> str:
        return 'add_member' if self.add else 'remove_member'


@dataclasses.dataclass(frozen=True)
class UpdateGroup:
    kind: typing.ClassVar[str] = 'update_group'
    group: str
    document: PolicyDocument


@dataclasses.dataclass(frozen=True)
class StackEntry:
    """A stack of the scenario: its validated document and tenant."""

    name: str
    project: str
    stack: stack_model.Stack
    document: typing.Mapping[str, typing.Any] = dataclasses.field(
        default_factory=dict)
    """The stack document as the policy service stores it
    (``{"stack": {...}}``, scenario names of relationships' ends made
    uuids)."""


@dataclasses.dataclass(frozen=True)
class PlanRequest:
    """``plan`` (decide and hold), ``boot_plan`` or ``confirm``."""

    kind: str
    stack: str


PLAN_KINDS = ('plan', 'boot_plan', 'confirm')


@dataclasses.dataclass(frozen=True)
class Migrate:
    """``migrate``: move a server through the scheduler.

    :param server: the server.
    :param host: the host it must go to (the filters still check it);
        None: the scheduler picks one other than its own.
    """

    kind: typing.ClassVar[str] = 'migrate'
    server: str
    host: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class FailHost:
    """``fail_host``: a host goes down for good and its servers are
    evacuated. Exactly one of ``host`` and ``server`` (the host that
    server runs on when the request runs)."""

    kind: typing.ClassVar[str] = 'fail_host'
    host: typing.Optional[str] = None
    server: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Repair:
    """``repair``: plan the fewest moves that end every hard violation
    of a group, a stack, or (neither given) every group and stack, and
    carry them out."""

    kind: typing.ClassVar[str] = 'repair'
    group: typing.Optional[str] = None
    stack: typing.Optional[str] = None

    @property
    def target(self) -> str:
        """How the report names what is repaired."""
        if self.group is not None:
            return f'group {self.group}'
        if self.stack is not None:
            return f'stack {self.stack}'
        return 'all'


@dataclasses.dataclass(frozen=True)
class Resilience:
    """``resilience``: what if ``count`` domains of scope ``fail`` fail
    at once, for every such combination (or ``cases`` of them drawn with
    ``seed``); each case starts from the world as the requests before
    left it and changes nothing outside itself.

    :param fail: the scope (``host`` or a scenario scope).
    :param count: domains failed together in each case.
    :param cases: at most this many cases, drawn with ``seed``; None:
        every combination.
    :param seed: what the draw starts from.
    :param groups: only these groups' servers and policies count; None:
        every group and server.
    """

    kind: typing.ClassVar[str] = 'resilience'
    fail: str
    count: int = 1
    cases: typing.Optional[int] = None
    seed: int = 0
    groups: typing.Optional[typing.Tuple[str, ...]] = None


MOVE_KINDS = (Migrate, FailHost, Repair)
"""Requests that move servers (the report then has ``moves``)."""


Request = typing.Union[Boot, Delete, Membership, UpdateGroup, PlanRequest,
                       Migrate, FailHost, Repair, Resilience]


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
    nova_config: typing.Mapping[str, typing.Any] = dataclasses.field(
        default_factory=lambda: dict(NOVA_DEFAULTS))
    """nova's ``[filter_scheduler]`` options (:data:`NOVA_DEFAULTS` for
    those the scenario leaves out)."""
    servers: typing.Tuple[Running, ...] = ()
    """The servers already running before the first request."""
    holds: typing.Tuple[Held, ...] = ()
    """The capacity stacks' decisions hold before the first request."""

    def topology(self) -> topo.Topology:
        domains = [topo.Domain(a.uuid, a.name, a.metadata['policy_scope'],
                               frozenset(a.hosts))
                   for a in self.aggregates if 'policy_scope' in a.metadata]
        return topo.build(self.scopes, domains,
                          licences=topo.licences(self.aggregates)
                          ).with_traits({h.name: h.traits
                                         for h in self.hosts})


def _classes(path, resources):
    """Resource class names: standard ones or CUSTOM_[A-Z0-9_]+."""
    for rc in resources:
        if rc not in orc.STANDARDS and not _CUSTOM_RC.match(str(rc)):
            raise ScenarioError(f'{path}.{validation.key(rc)}',
                                'neither a standard '
                                'resource class (VCPU, MEMORY_MB, DISK_GB, '
                                '...) nor CUSTOM_[A-Z0-9_]+')
    return {rc: int(n) for rc, n in resources.items()}


def _as_strings(data):
    return {key: str(value).lower() if isinstance(value, bool)
            else str(value) for key, value in (data or {}).items()}


_RULE_SCOPE = re.compile(r'\.rules\.max_server_per_(\w+)$')


def _document(path, data, drop=(), scopes=None):
    """A group's policy document; a rule on a scope the scenario does
    not define (``scopes``) is refused for its scope first."""
    try:
        return parser.parse_document(
            {k: v for k, v in data.items() if k not in drop}, prefix=path)
    except PolicyError as exc:
        rule = _RULE_SCOPE.search(exc.field)
        if rule and scopes is not None and rule.group(1) != 'host' and \
                rule.group(1) not in scopes:
            raise ScenarioError(exc.field, (
                f"{exc.value!r}: unknown scope '{rule.group(1)}'; define "
                'it under scopes'))
        raise ScenarioError(exc.field, f'{exc.value!r}: {exc.problem}')


def _scopes(data):
    scopes = {}
    for name, settings in (data or {}).items():
        path = f'scopes.{validation.key(name)}'
        try:
            parser.validate_scope_name(path, name)
        except PolicyError as exc:
            raise ScenarioError(path, exc.problem)
        if name == 'host':
            raise ScenarioError(path, 'host is the implicit scope')
        settings = settings or {}
        parent = settings.get('parent')
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
    for i, item in enumerate(data or []):
        path = f'stacks[{i}]'
        body = dict(item)
        project = body.pop('project', DEFAULT_PROJECT)
        relationships = body.get('relationships')
        for rel in relationships if isinstance(relationships, list) else ():
            target = rel.get('to') if isinstance(rel, dict) else None
            if isinstance(target, dict) and len(target) == 1:
                (kind, name), = target.items()
                if not isinstance(name, str):
                    continue    # the stack parser names it
                if kind == 'server_group' and name in groups:
                    rel['to'] = {kind: groups[name].uuid}
                elif kind == 'server' and not _looks_like_uuid(name):
                    rel['to'] = {kind: stable_uuid('server', name)}
        try:
            stack = stack_model.parse({'stack': body})
        except stack_model.StackError as exc:
            raise ScenarioError(_stack_path(path, exc.field), exc.message)
        if stack.name in out:
            raise ScenarioError(f'{path}.name',
                                f'{stack.name!r}: stack exists already')
        out[stack.name] = StackEntry(stack.name, project, stack,
                                     {'stack': body})
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
        traits = item.get('traits', [])
        for j, trait in enumerate(traits):
            if not isinstance(trait, str) or \
                    not forbidden_aggregates.valid_trait(trait):
                raise ScenarioError(f'{path}.traits[{j}]', f'{trait!r}: '
                                    'neither a standard trait nor '
                                    'CUSTOM_[A-Z0-9_]+')
        resources = _classes(f'{path}.resources', item['resources'])
        reserved = _classes(f'{path}.reserved', item.get('reserved') or {})
        for rc, amount in reserved.items():
            if amount > resources.get(rc, 0):
                raise ScenarioError(f'{path}.reserved.{validation.key(rc)}',
                                    f'{amount}: more than the host has '
                                    f'({resources.get(rc, 0)})')
        hosts.append(Host(item['name'], resources, tuple(traits),
                          {rc: n for rc, n in reserved.items() if n},
                          _inventory(f'{path}.inventory',
                                     item.get('inventory') or {},
                                     resources)))
    generated_scopes = {}
    if generate is not None:
        spec = generate['hosts']
        prefix = spec.get('prefix', 'n')
        resources = _classes('generate.hosts.resources', spec['resources'])
        hosts += [Host(f'{prefix}{k}', resources)
                  for k in range(1, int(spec['count']) + 1)]
        generated_scopes.update((scope, int(n)) for scope, n in (
            generate.get('scopes') or {}).items())
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


_UNITS = ('min_unit', 'max_unit', 'step_size')


def _inventory(path, data, resources):
    """``hosts[].inventory``: Placement's inventory fields of classes the
    host has (``allocation_ratio`` a finite float)."""
    found = {}
    for rc, fields in data.items():
        where = f'{path}.{validation.key(rc)}'
        if rc not in resources:
            raise ScenarioError(where, 'not among the host\'s resources: '
                                'give its total there')
        fields = {field: int(value) if field in _UNITS else value
                  for field, value in (fields or {}).items()}
        if 'allocation_ratio' in fields:
            ratio = float(fields['allocation_ratio'])
            if not math.isfinite(ratio):
                raise ScenarioError(f'{where}.allocation_ratio',
                                    f'{ratio}: must be a finite number')
            fields['allocation_ratio'] = ratio
        if fields:
            found[rc] = fields
    return found


def _aggregates(data, scopes, hosts, generated_scopes):
    known = {h.name for h in hosts}
    aggregates = []
    for i, item in enumerate(data or []):
        path = f'aggregates[{i}]'
        name = item['name']
        agg_uuid = item.get('uuid') or stable_uuid('aggregate', name)
        try:
            agg_uuid = str(uuid.UUID(str(agg_uuid)))
        except ValueError:
            raise ScenarioError(f'{path}.uuid', f'{agg_uuid!r}: not a uuid')
        metadata = _as_strings(item.get('metadata'))
        if 'scope' in item:
            if item['scope'] not in scopes:
                raise ScenarioError(f'{path}.scope', f'{item["scope"]!r}: '
                                    'not declared under scopes')
            metadata['policy_scope'] = item['scope']
        members = item.get('hosts', [])
        for j, host in enumerate(members):
            if host not in known:
                raise ScenarioError(f'{path}.hosts[{j}]',
                                    f'{host!r}: no such host')
        aggregates.append(topo.AggregateInfo(agg_uuid, name, tuple(members),
                                             metadata))
    ordered = [h.name for h in hosts]
    for scope, n in generated_scopes.items():
        if scope not in scopes:
            raise ScenarioError(f'generate.scopes.{validation.key(scope)}',
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


NOVA_FILTERS = 'nova.scheduler.filters.all_filters'
OUR_FILTERS = 'nova_scoped_policies.scheduler.filters.all_filters'
NOVA_DEFAULTS = {
    # what the README tells operators to set in [filter_scheduler]: nova's
    # default filters and weighers, and ours
    'available_filters': [NOVA_FILTERS, OUR_FILTERS],
    'enabled_filters': ['ComputeFilter', 'ComputeCapabilitiesFilter',
                        'ImagePropertiesFilter',
                        'ServerGroupAntiAffinityFilter',
                        'ServerGroupAffinityFilter', 'ScopedAffinityFilter',
                        'ScopedAntiAffinityFilter'],
    'weight_classes': ['nova.scheduler.weights.all_weighers',
                       'nova_scoped_policies.scheduler.weights.'
                       'all_weighers'],
}
"""The ``[filter_scheduler]`` options a scenario leaves out."""
_NOT_SIMULATED = {
    'host_subset_size': (1, 'nova picks at random among the best hosts; '
                            'the simulator decides deterministically'),
    'shuffle_best_same_weighed_hosts': (
        False, 'nova shuffles equally weighed hosts; the simulator decides '
               'deterministically'),
    'image_props_weight_multiplier': (
        0.0, "the weigher reads the instances' images from nova's cell "
             'database, which the simulator does not have'),
}
"""``[filter_scheduler]`` options the simulator holds at one value."""


def _option(path, opt, value):
    """``value`` as ``opt``'s type makes it (the schema typed it)."""
    try:
        found = validation.option_value(opt, value)
    except ValueError as exc:
        raise ScenarioError(path, f'{shown(value)}: {exc}')
    if isinstance(found, float) and not math.isfinite(found):
        raise ScenarioError(path, f'{found}: must be a finite number')
    return found


def _config(data):
    """``config``: [scoped_policies] options and nova's [filter_scheduler]
    ones, flat (a name both groups have is ours) or under
    ``filter_scheduler``, their values typed by the schema
    (:func:`_config_schema`).

    :returns: ([scoped_policies] options, [filter_scheduler] options).
    """
    ours, nova = _options()
    known = set(ours) | set(nova) | {'filter_scheduler'}
    config, nova_config = {}, {}
    data = dict(data or {})
    nested = data.pop('filter_scheduler', None) or {}
    for key, value in data.items():
        path = f'config.{validation.key(key)}'
        if key in ours:
            if key in SIMULATOR_OPTIONS:
                raise ScenarioError(path, 'the simulator sets it: it keeps '
                                    'the groups in its own policy store')
            config[key] = _option(path, ours[key], value)
        elif key in nova:
            nova_config[key] = _option(path, nova[key], value)
        else:
            raise ScenarioError(path, _unknown(
                key, known, 'a [scoped_policies] option or one of nova\'s '
                '[filter_scheduler]'))
    for key, value in nested.items():
        path = f'config.filter_scheduler.{validation.key(key)}'
        if key not in nova:
            raise ScenarioError(path, _unknown(
                key, nova, 'one of nova\'s [filter_scheduler] options'))
        nova_config[key] = _option(path, nova[key], value)
    for key, (only, why) in _NOT_SIMULATED.items():
        if key in nova_config and nova_config[key] != only:
            raise ScenarioError(_where(data, key), f'{nova_config[key]!r}: '
                                f'only {only!r} is simulated: {why}')
    nova_config = dict(NOVA_DEFAULTS, **nova_config)
    _check_classes(data, nova_config)
    return config, nova_config


def _unknown(key, known, expected):
    close = difflib.get_close_matches(str(key), sorted(known), n=1)
    return (f'unknown option; expected {expected}'
            + (f' (did you mean {close[0]}?)' if close else ''))


def _where(flat, key):
    return (f'config.{key}' if key in flat
            else f'config.filter_scheduler.{key}')


_NOT_LOADED = (ImportError, ValueError, TypeError, AttributeError)
"""What nova's loader raises for a name that is no importable class or
function (an empty module name, a function that lists no classes...)."""


def _check_classes(flat, nova_config):
    """Every enabled filter is available, every weigher importable."""
    from nova.scheduler import filters as nova_filters
    from nova.scheduler import weights as nova_weights
    from nova import exception
    try:
        available = {cls.__name__ for cls in
                     nova_filters.HostFilterHandler().get_matching_classes(
                         nova_config['available_filters'])}
    except _NOT_LOADED + (exception.ClassNotFound,) as exc:
        raise ScenarioError(_where(flat, 'available_filters'), str(exc))
    for i, name in enumerate(nova_config['enabled_filters']):
        if name not in available:
            raise ScenarioError(f'{_where(flat, "enabled_filters")}[{i}]',
                                f'{name!r}: not among the available '
                                'filters (nova\'s and ours)')
    try:
        nova_weights.HostWeightHandler().get_matching_classes(
            nova_config['weight_classes'])
    except _NOT_LOADED + (exception.ClassNotFound,) as exc:
        raise ScenarioError(_where(flat, 'weight_classes'), str(exc))


def _groups(data, scopes):
    groups = {}
    for i, item in enumerate(data or []):
        path = f'groups[{i}]'
        name = item['name']
        if name in groups:
            raise ScenarioError(f'{path}.name', f'{name!r}: defined twice')
        project = item.get('project', DEFAULT_PROJECT)
        groups[name] = Group(name, project, _document(
            path, item, drop=('name', 'project'), scopes=scopes))
    return groups


class _Room:
    """What Placement would still allocate on each host as the servers
    already running, then the holds, take theirs: its capacity
    (:meth:`Host.capacity`) less what those before took, an amount its
    inventory's units allow (:meth:`Host.refuses`).

    :param hosts: the scenario's hosts.
    """

    def __init__(self, hosts: typing.Sequence[Host]) -> None:
        self.hosts = {h.name: h for h in hosts}
        self._left: typing.Dict[str, typing.Dict[str, int]] = {}

    def host(self, path: str, name: str) -> Host:
        host = self.hosts.get(name)
        if host is None:
            raise ScenarioError(path, f'{shown(name)}: no such host')
        return host

    def take(self, path: str, host: Host,
             resources: typing.Mapping[str, int], what: str) -> None:
        """``what`` (a server, a hold) takes ``resources`` on ``host``.

        :param path: the key of the resources, for errors.
        :raises ScenarioError: Placement would refuse it.
        """
        free = self._left.setdefault(host.name, {
            rc: host.capacity(rc) for rc in host.resources})
        for rc, amount in resources.items():
            where = f'{path}.{validation.key(rc)}'
            if amount > free.get(rc, 0):
                raise ScenarioError(where, (
                    f'{amount}: {what} does not fit {host.name} '
                    f'({free.get(rc, 0)} of {rc} left)'))
            refused = host.refuses(rc, amount)
            if refused:
                raise ScenarioError(where, f'{amount}: {refused}')
        for rc, amount in resources.items():
            free[rc] -= amount


def _servers(data, room: _Room,
             groups: typing.Mapping[str, Group]) -> typing.List[Running]:
    """``servers:``: each on a known host, in a known group, with
    resources its host has room for (Placement's capacity less what the
    servers before it take) in amounts its inventory allows."""
    out: typing.List[Running] = []
    seen: typing.Set[str] = set()
    for i, item in enumerate(data or []):
        path = f'servers[{i}]'
        name = item['name']
        if name in seen:
            raise ScenarioError(f'{path}.name', f'{shown(name)}: server '
                                'defined twice')
        seen.add(name)
        host = room.host(f'{path}.host', item['host'])
        group = item.get('group')
        if group is not None:
            _group_ref(f'{path}.group', group, groups)
        project = item.get('project') or (groups[group].project if group
                                          else DEFAULT_PROJECT)
        resources = _classes(f'{path}.flavor.resources',
                             item['flavor']['resources'])
        room.take(f'{path}.flavor.resources', host, resources, shown(name))
        out.append(Running(name, host.name, project, group, resources))
    return out


def _holds(data, room: _Room,
           stacks: typing.Mapping[str, 'StackEntry']
           ) -> typing.List[Held]:
    """``holds:``: each on a known host with room for it, for a known
    stack's server (each held once) if it names them."""
    out: typing.List[Held] = []
    seen: typing.Set[typing.Tuple[str, str]] = set()
    for i, item in enumerate(data or []):
        path = f'holds[{i}]'
        host = room.host(f'{path}.host', item['host'])
        stack, server = item.get('stack'), item.get('server')
        project = item.get('project')
        if stack is not None:
            entry = stacks.get(stack)
            if entry is None:
                raise ScenarioError(f'{path}.stack',
                                    f'{shown(stack)}: no such stack')
            project = project or entry.project
            if server is not None:
                if server not in {s.name for s in entry.stack.servers}:
                    raise ScenarioError(f'{path}.server', (
                        f'{shown(server)}: no such server in stack '
                        f'{shown(stack)}'))
                if (stack, server) in seen:
                    raise ScenarioError(f'{path}.server', (
                        f'{shown(server)}: held twice'))
                seen.add((stack, server))
        elif server is not None:
            raise ScenarioError(f'{path}.server', 'a held server needs '
                                'its stack: give stack too')
        resources = _classes(f'{path}.resources', item['resources'])
        room.take(f'{path}.resources', host, resources, 'the hold')
        out.append(Held(host.name, resources, project or DEFAULT_PROJECT,
                        stack, server))
    return out


@dataclasses.dataclass
class _Known:
    """What the requests before one have made: the names a request may
    refer to.

    :param groups: the scenario's groups.
    :param stacks: its stacks.
    :param hosts: its host names.
    :param servers: the servers that exist at this point.
    """

    groups: typing.Mapping[str, Group]
    stacks: typing.Mapping[str, StackEntry]
    hosts: typing.FrozenSet[str]
    servers: typing.Set[str] = dataclasses.field(default_factory=set)

    def server(self, path: str, name: str) -> str:
        if name not in self.servers:
            raise ScenarioError(path, f'{name!r}: no such server')
        return name

    def host(self, path: str, name: str) -> str:
        if name not in self.hosts:
            raise ScenarioError(path, f'{name!r}: no such host')
        return name

    def stack(self, path: str, name: str) -> str:
        if name not in self.stacks:
            raise ScenarioError(path, f'{name!r}: no such stack')
        return name

    def new_servers(self, path: str, names: typing.Iterable[str]) -> None:
        for name in names:
            if name in self.servers:
                raise ScenarioError(path, f'server {name!r} exists already')
            self.servers.add(name)


def _boot_request(path, body, known: _Known) -> Boot:
    request = _boot(path, body, known.groups)
    known.new_servers(f'{path}.name', request.servers)
    return request


def _delete(path, body, known: _Known) -> Delete:
    known.servers.discard(known.server(path, body))
    return Delete(body)


def _membership(path, body, known: _Known) -> Membership:
    return Membership(_group_ref(f'{path}.group', body['group'],
                                 known.groups),
                      known.server(f'{path}.server', body['server']),
                      path.endswith('.add_member'))


def _plan_request(path, body, known: _Known) -> PlanRequest:
    kind = path.rsplit('.', 1)[1]
    name = known.stack(f'{path}.stack', body['stack'])
    if kind == 'plan':
        _solver_installed(path)
    if kind == 'boot_plan':
        known.new_servers(path, (s.name for s in
                                 known.stacks[name].stack.servers))
    return PlanRequest(kind, name)


def _update_group(path, body, known: _Known) -> UpdateGroup:
    return UpdateGroup(_group_ref(f'{path}.group', body['group'],
                                  known.groups),
                       _document(path, body, drop=('group',)))


def _migrate(path, body, known: _Known) -> Migrate:
    host = body.get('host')
    return Migrate(known.server(f'{path}.server', body['server']),
                   known.host(f'{path}.host', host) if host else None)


def _fail_host(path, body, known: _Known) -> FailHost:
    if len(body) != 1:
        raise ScenarioError(path, 'give either host or server')
    if 'host' in body:
        return FailHost(host=known.host(f'{path}.host', body['host']))
    return FailHost(server=known.server(f'{path}.server', body['server']))


def _repair(path, body, known: _Known) -> Repair:
    body = body or {}
    if len(body) > 1:
        raise ScenarioError(path, 'give group, stack or neither (every '
                            'group and stack), not both')
    _solver_installed(path)
    if 'group' in body:
        return Repair(group=_group_ref(f'{path}.group', body['group'],
                                       known.groups))
    if 'stack' in body:
        return Repair(stack=known.stack(f'{path}.stack', body['stack']))
    return Repair()


def _resilience(path, body, known: _Known) -> Resilience:
    groups = body.get('groups')
    if groups is not None:
        groups = tuple(_group_ref(f'{path}.groups[{i}]', name, known.groups)
                       for i, name in enumerate(groups))
    cases = body.get('cases')
    return Resilience(body['fail'], int(body.get('count', 1)),
                      None if cases is None else int(cases),
                      int(body.get('seed', 0)), groups)


def _failable(scenario: 'Scenario') -> None:
    """Each ``resilience`` request fails a scope the scenario has (or
    ``host``), and no more domains at once than it has."""
    topology = None
    for path, request in scenario.requests:
        if not isinstance(request, Resilience):
            continue
        topology = topology or scenario.topology()
        if request.fail != 'host' and topology.scope(request.fail) is None:
            raise ScenarioError(f'{path}.fail', (
                f'{request.fail!r}: no such scope; expected host or one of '
                f'{", ".join(s.name for s in scenario.scopes) or "(none)"}'))
        domains = (len(scenario.hosts) if request.fail == 'host'
                   else len(topology.domains(request.fail)))
        if request.count > domains:
            raise ScenarioError(f'{path}.count', (
                f'{request.count}: more than the {domains} domains of '
                f'scope {request.fail}'))


_PARSERS = {'boot': _boot_request, 'delete': _delete,
            'add_member': _membership, 'remove_member': _membership,
            'update_group': _update_group, 'plan': _plan_request,
            'boot_plan': _plan_request, 'confirm': _plan_request,
            'migrate': _migrate, 'fail_host': _fail_host,
            'repair': _repair, 'resilience': _resilience}
"""Request kind -> its parser: ``(path, body, known) -> request``."""


def _solver_installed(path: str) -> None:
    """``plan`` and ``repair`` decide with OR-Tools (the ``joint``
    extra): without it the scenario is refused before anything runs.

    :raises ScenarioError: OR-Tools is not installed.
    """
    try:
        importlib.import_module('ortools.sat.python.cp_model')
    except ImportError:
        raise ScenarioError(path, solver.MISSING) from None


def _requests(data, groups, stacks=None, hosts=(), servers=()):
    known = _Known(groups, stacks or {}, frozenset(hosts),
                   {s.name for s in servers})
    out = []
    for i, item in enumerate(data or []):
        (kind, body), = item.items()
        path = f'requests[{i}].{kind}'
        out.append((path, _PARSERS[kind](path, body, known)))
    return out


def _group_ref(path, name, groups):
    if name not in groups:
        raise ScenarioError(path, f'{name!r}: no such group')
    return name


def _boot(path, body, groups):
    group = body.get('group')
    if group is not None:
        _group_ref(f'{path}.group', group, groups)
    flavor = body['flavor']
    project = body.get('project') or (groups[group].project if group
                                      else DEFAULT_PROJECT)
    extra_specs = _as_strings(flavor.get('extra_specs'))
    _nova_checks(f'{path}.flavor.extra_specs', extra_specs, 'extra_spec')
    properties = _as_strings((body.get('image') or {}).get('properties'))
    _nova_checks(f'{path}.image.properties', properties, 'image_property')
    return Boot(
        body['name'], group, int(body.get('count', 1)), project,
        _classes(f'{path}.flavor.resources', flavor['resources']),
        extra_specs, properties)


def _nova_checks(path: str, values: typing.Mapping[str, str],
                 kind: str) -> None:
    """Each of ``values`` through nova's own check of its ``kind``
    (:func:`_nova_refuses`)."""
    for key, value in values.items():
        problem = _nova_refuses(kind, key, value)
        if problem:
            raise ScenarioError(f'{path}.{validation.key(key)}',
                                f'{shown(value)}: {problem}')


@functools.lru_cache(maxsize=4096)
def _nova_refuses(kind: str, key: str, value: str) -> typing.Optional[str]:
    """What nova says of an ``extra_spec`` of a flavor (its API's checks,
    microversion 2.86 and later: the namespaces nova knows, and their
    values) or an ``image_property`` (as it reads an image's metadata for
    a boot: an architecture, a number of cores... of the right shape),
    or None when it takes it. Remembered: nova's extra spec check tries
    its hundreds of patterns in turn, and a scenario's boots repeat their
    flavors."""
    from nova import exception
    try:
        if kind == 'extra_spec':
            from nova.api.validation.extra_specs import validators
            if not validators.VALIDATORS:
                validators.load_validators()
            validators.validate(key, value)
        else:
            from nova import objects
            objects.register_all()
            objects.ImageMetaProps.from_dict({key: value})
    except (ValueError, TypeError, exception.NovaException) as exc:
        return str(exc)
    return None


MAX_NESTING = 48
"""The deepest a scenario nests (a stack's groups nest 8 deep, each
two levels: a member's mapping and its list)."""
MAX_REPEATED = 1000000
"""The most values YAML aliases (``*name``) may add to a scenario by
repeating what an anchor names."""


def _bounded(data: dict) -> None:
    """Refuse a document that nests deeper than :data:`MAX_NESTING` (no
    parser or message should recurse that deep) or that YAML aliases make
    larger by more than :data:`MAX_REPEATED` values (an alias repeats its
    anchor's value, and aliases of aliases repeat it exponentially: a
    few lines, billions of values), naming the section. One pass over
    the document as read, each mapping and list once; a second, over
    what aliases repeat, only where an alias repeats something.

    :raises ScenarioError: naming the section.
    """
    seen: typing.Set[int] = set()
    repeated = False
    for key, value in data.items():
        stack = [(value, 1)] if type(value) in _CONTAINERS else []
        while stack:
            node, depth = stack.pop()
            if id(node) in seen:
                repeated = True
                continue
            seen.add(id(node))
            if depth >= MAX_NESTING:
                raise ScenarioError(validation.key(key), (
                    f'nests deeper than {MAX_NESTING} levels'))
            stack.extend((child, depth + 1) for child in (
                node.values() if type(node) is dict else node)
                if type(child) in _CONTAINERS)
    if repeated:
        _not_repeated_too_much(data)


_CONTAINERS = frozenset({dict, list})


def _not_repeated_too_much(data: dict) -> None:
    """:func:`_bounded` where YAML aliases repeat values: each mapping
    and list's height and size as the aliases make it (once each, after
    its children)."""
    height: typing.Dict[int, int] = {}
    size: typing.Dict[int, int] = {}
    distinct = 0
    stack = [(data, False, '')]
    while stack:
        node, done, section = stack.pop()
        children = list(node.values()) if type(node) is dict else node
        inner = [c for c in children if type(c) in _CONTAINERS]
        if not done:
            if height.get(id(node)) == -1:
                # on the way to itself: an alias inside its own anchor
                raise ScenarioError(section, 'a YAML alias repeats a '
                                    'value inside itself')
            if id(node) in height:
                continue
            height[id(node)] = -1
            distinct += 1 + len(children) - len(inner)
            stack.append((node, True, section))
            if node is data:
                stack.extend((v, False, validation.key(k))
                             for k, v in data.items()
                             if type(v) in _CONTAINERS)
            else:
                stack.extend((c, False, section) for c in inner)
            continue
        height[id(node)] = 1 + max((height[id(c)] for c in inner),
                                   default=0)
        size[id(node)] = 1 + len(children) - len(inner) + sum(
            size.get(id(c), 1) for c in inner)
    for key, value in data.items():
        if type(value) in _CONTAINERS and height[id(value)] >= MAX_NESTING:
            raise ScenarioError(validation.key(key), (
                f'nests deeper than {MAX_NESTING} levels'))
    if size[id(data)] > distinct + MAX_REPEATED:
        worst = max((k for k, v in data.items() if type(v) in _CONTAINERS),
                    key=lambda k: size[id(data[k])])
        raise ScenarioError(validation.key(worst), (
            f'YAML aliases repeat more than {MAX_REPEATED} values'))


def parse(data: object) -> Scenario:
    """Validate a decoded scenario.

    :param data: the scenario as loaded from YAML.
    :raises ScenarioError: naming the first bad key.
    """
    if data is None:
        raise ScenarioError('', 'the scenario is empty: it needs hosts '
                            '(hosts or generate.hosts), and groups and '
                            'requests to try on them')
    if not isinstance(data, dict):
        raise ScenarioError('', (
            f'the scenario must be a mapping of sections '
            f'({", ".join(_SHAPE["properties"])}), not a '
            f'{type(data).__name__}'))
    _bounded(data)
    error = schema_error(data)
    if error is not None:
        raise error
    scopes = _scopes(data.get('scopes') or {})
    hosts, generated = _hosts(data.get('hosts') or [], data.get('generate'))
    aggregates = _aggregates(data.get('aggregates') or [], scopes, hosts,
                             generated)
    groups = _groups(data.get('groups'), scopes)
    room = _Room(hosts)
    servers = _servers(data.get('servers'), room, groups)
    stacks = _stacks(data.get('stacks'), groups)
    held = _holds(data.get('holds'), room, stacks)
    config, nova_config = _config(data.get('config'))
    scenario = Scenario(tuple(hosts), tuple(aggregates),
                        tuple(scopes.values()), config, groups,
                        tuple(_requests(data.get('requests'), groups,
                                        stacks, (h.name for h in hosts),
                                        servers)),
                        stacks, nova_config, tuple(servers), tuple(held))
    _as_the_policy_service_would(scenario)
    _failable(scenario)
    return scenario


def _as_the_policy_service_would(scenario: Scenario) -> None:
    """What the policy service refuses, by its own rules: a group's
    policies on a scope the topology does not define or naming a domain
    its project cannot target (:func:`.engine.admission.admit`, which the
    API calls on a group's policies); a stack's scopes and domains
    (:func:`stack_model.check_topology`); an instance added to a second
    group (:func:`_memberships`)."""
    topology = scenario.topology()
    documents = [(f'groups[{i}]', g.project, g.document)
                 for i, g in enumerate(scenario.groups.values())]
    documents += [(path, scenario.groups[r.group].project, r.document)
                  for path, r in scenario.requests
                  if isinstance(r, UpdateGroup)]
    for path, project, document in documents:
        try:
            admission.admit(document, topology, project, path)
        except PolicyError as exc:
            hint = ('; define it under scopes'
                    if exc.problem.startswith('unknown scope') else '')
            raise ScenarioError(exc.field,
                                f'{exc.value!r}: {exc.problem}{hint}')
    for i, entry in enumerate(scenario.stacks.values()):
        try:
            stack_model.check_topology(entry.stack, topology)
        except stack_model.StackError as exc:
            raise ScenarioError(_stack_path(f'stacks[{i}]', exc.field),
                                exc.message)
    _memberships(scenario)


def _memberships(scenario: Scenario) -> None:
    """The requests' ``add_member`` and ``remove_member`` through the
    policy service's own operations (:meth:`.db.api.PolicyStore.
    add_member`, ``remove_member``) on a scratch store, the server group
    Nova booted each server into known (as the service asks Nova): what
    they refuse (an instance in a second group), the scenario refuses,
    naming the request."""
    requests = [(path, r) for path, r in scenario.requests
                if isinstance(r, (Boot, Membership, Delete))]
    if not any(isinstance(r, Membership) for _, r in requests):
        return
    # imported here: only scenarios with memberships need the store
    from nova_scoped_policies.db import api as store_api
    from nova_scoped_policies.db import migration
    store = store_api.PolicyStore('sqlite://')
    migration.create_scratch(store.engine)
    try:
        for name, group in scenario.groups.items():
            store.create_group(group.uuid, group.project, group.document,
                               name=name, check_scopes=False)
        _replay(store, scenario, requests)
    finally:
        store.engine.dispose()


def _replay(store, scenario: Scenario, requests) -> None:
    """Each request of ``requests`` (boots, memberships, deletes) in
    turn, the memberships through ``store``."""
    from nova_scoped_policies.db import api as store_api
    # group -> its members as the simulation counts them (booted into it
    # and not removed, or added); server -> the group Nova booted it into,
    # the group it was added to
    members: typing.Dict[str, typing.Set[str]] = {
        name: set() for name in scenario.groups}
    booted: typing.Dict[str, str] = {
        s.name: s.group for s in scenario.servers if s.group}
    for server, group in booted.items():
        members[group].add(server)
    added: typing.Dict[str, str] = {}
    for path, request in requests:
        if isinstance(request, Boot):
            if request.group:
                members[request.group].update(request.servers)
                booted.update((s, request.group) for s in request.servers)
            continue
        server = request.server
        instance = stable_uuid('server', server)
        if isinstance(request, Delete):
            if server in added:
                store.remove_member(scenario.groups[added.pop(server)].uuid,
                                    instance)
            booted.pop(server, None)
            for found in members.values():
                found.discard(server)
            continue
        group = request.group
        if request.add and server not in members[group]:
            nova = booted.get(server)
            try:
                store.add_member(
                    scenario.groups[group].uuid, instance, booted_in=(
                        scenario.groups[nova].uuid if nova else None))
            except store_api.Conflict as exc:
                raise ScenarioError(f'{path}.server', (
                    f'{server!r}: the policy service refuses it: {exc} '
                    f'(group {added.get(server) or nova!r}; an instance '
                    'is in at most one group: remove_member it first)'))
            members[group].add(server)
            if booted.get(server) != group:
                added[server] = group
        elif not request.add and server in members[group]:
            members[group].discard(server)
            store.remove_member(
                scenario.groups[group].uuid, instance,
                booted=[instance] if booted.get(server) == group else ())
            if added.get(server) == group:
                del added[server]


_YAML_LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
"""PyYAML's safe loader, on libyaml where PyYAML was built with it: the
same documents, read about six times as fast (a scenario file of a few
thousand requests takes 50 ms to read in Python)."""


def _json(text: str) -> typing.Optional[object]:
    """A scenario written as JSON (YAML's flow style, as an export of a
    large cloud is), read by orjson: PyYAML builds each of a file's
    million nodes in Python (10 s for 50,000 hosts, 0.3 s as JSON). None
    when it is not JSON (then it is read as YAML)."""
    if not text.lstrip().startswith('{'):
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def load(path: str, appended: typing.Sequence[dict] = ()) -> Scenario:
    """Read and validate a scenario file.

    :param appended: requests to run after the file's (a command's own,
        as the ``resilience`` command's); an error in one names its
        option (``--fail``) rather than a key of the file.
    :raises ScenarioError: unreadable YAML or a bad key.
    """
    try:
        with open(path, encoding='utf-8') as handle:
            text = handle.read()
        data = _json(text)
        if data is None:
            data = yaml.load(text, Loader=_YAML_LOADER)
    except (OSError, yaml.YAMLError, ValueError) as exc:
        # ValueError: PyYAML's int() of a number beyond Python's digit
        # limit, and text that is not UTF-8
        raise ScenarioError('', f'cannot read the scenario: {exc}')
    if not appended or not isinstance(data, dict) or not isinstance(
            data.get('requests') or [], list):
        return parse(data)
    first = len(data.get('requests') or [])
    data = dict(data, requests=list(data.get('requests') or []) +
                list(appended))
    try:
        return parse(data)
    except ScenarioError as exc:
        found = re.match(r'requests\[(\d+)\]\.\w+\.(\w+)', exc.path)
        if found and int(found.group(1)) >= first:
            option = {'groups': 'group'}.get(found.group(2), found.group(2))
            raise ScenarioError(f'--{option}', str(exc)[len(exc.path) + 2:])
        raise
