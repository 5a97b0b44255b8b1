"""The stack document as typed records (see stack-document.md)."""

import dataclasses
import typing
import uuid

import jsonschema

from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy import parser
from nova_scoped_policies.topology import Topology
from nova_scoped_policies import validation


class StackError(ValueError):
    """A stack document is invalid.

    :param field: the offending field, e.g. ``stack.group.members[1].name``.
    :param message: what is wrong, for people.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f'{field}: {message}')


@dataclasses.dataclass(frozen=True)
class Flavor:
    """What scheduling needs of a flavor.

    :param resources: resource class -> amount (standard or ``CUSTOM_``).
    :param required: traits a host must have.
    :param forbidden: traits a host must not have.
    """

    resources: typing.Mapping[str, int]
    required: typing.FrozenSet[str] = frozenset()
    forbidden: typing.FrozenSet[str] = frozenset()

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.resources.items())), self.required,
                     self.forbidden))


@dataclasses.dataclass(frozen=True)
class Server:
    """One server of a leaf group.

    :param name: unique in the stack (``<group>-<n>`` or as listed).
    :param group: the name of its leaf group.
    :param flavor: what it needs.
    """

    name: str
    group: str
    flavor: Flavor


@dataclasses.dataclass(frozen=True)
class Group:
    """A group of the stack tree: a leaf (``servers``) or inner (``members``).

    :param name: unique in the stack.
    :param field: where it is in the document, for errors.
    :param document: its policies and rules (LLMN expanded). On a leaf they
        mean what they mean for a server group; on an inner group they apply
        across member groups (``max_server_per_<scope>`` counts the subtree).
    :param members: the member groups (inner groups only).
    :param servers: the servers (leaves only).
    """

    name: str
    field: str
    document: PolicyDocument
    members: typing.Tuple['Group', ...] = ()
    servers: typing.Tuple[Server, ...] = ()

    @property
    def leaf(self) -> bool:
        return not self.members

    def all_servers(self) -> typing.Tuple[Server, ...]:
        """Every server of the subtree, in document order."""
        if self.leaf:
            return self.servers
        return tuple(s for m in self.members for s in m.all_servers())

    def walk(self) -> typing.Iterator['Group']:
        """This group and every group under it, depth first."""
        yield self
        for member in self.members:
            yield from member.walk()


@dataclasses.dataclass(frozen=True)
class Existing:
    """A relationship end that exists already (read, never moved).

    :param kind: ``server_group`` or ``server``.
    :param uuid: its uuid (normalised).
    """

    kind: str
    uuid: str


@dataclasses.dataclass(frozen=True)
class Relationship:
    """Policies between every pair (x in ``source``, y in ``target``).

    :param source: a group name of the stack.
    :param target: a group name of the stack, or an :class:`Existing`.
    :param document: the policies (symmetric).
    :param field: where it is in the document, for errors.
    """

    source: str
    target: typing.Union[str, Existing]
    document: PolicyDocument
    field: str


@dataclasses.dataclass(frozen=True)
class Stack:
    """A validated stack document.

    :param name: the stack name.
    :param lease_seconds: how long the decision is held.
    :param root: the root group.
    :param relationships: the relationships, in order.
    """

    name: str
    lease_seconds: int
    root: Group
    relationships: typing.Tuple[Relationship, ...] = ()

    @property
    def servers(self) -> typing.Tuple[Server, ...]:
        return self.root.all_servers()

    def group(self, name: str) -> typing.Optional[Group]:
        for group in self.root.walk():
            if group.name == name:
                return group
        return None

    def existing(self, kind: str) -> typing.Tuple[str, ...]:
        """The uuids of the existing resources of ``kind`` (``server`` or
        ``server_group``) its relationships relate to, in order."""
        found = [rel.target.uuid for rel in self.relationships
                 if isinstance(rel.target, Existing)
                 and rel.target.kind == kind]
        return tuple(dict.fromkeys(found))

    @property
    def scopes(self) -> typing.FrozenSet[str]:
        """Every scope a policy or rule of the stack names."""
        found: typing.Set[str] = set()
        for group in self.root.walk():
            found |= group.document.scopes
        for rel in self.relationships:
            found |= rel.document.scopes
        return frozenset(found)


# -- parsing ---------------------------------------------------------------

DEFAULT_LEASE_SECONDS = 600
MAX_LEASE_SECONDS = 7 * 24 * 3600
MAX_SERVERS = 1000
"""Most servers one stack may hold (a decision is one solver model)."""
MAX_DEPTH = 8
_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 64,
         'pattern': r'^[A-Za-z0-9][A-Za-z0-9_.-]*$'}
_UUID = {'type': 'string', 'minLength': 32, 'maxLength': 36,
         'pattern': r'^[0-9a-fA-F-]+$'}
_CLASS = r'^[A-Z0-9_]{1,255}$'
_FLAVOR = {
    'type': 'object', 'additionalProperties': False,
    'required': ['resources'],
    'properties': {
        'resources': {
            'type': 'object', 'minProperties': 1, 'maxProperties': 64,
            'propertyNames': {'pattern': _CLASS},
            'additionalProperties': {'type': 'integer', 'minimum': 0,
                                     'maximum': 2 ** 31 - 1}},
        'traits': {
            'type': 'object', 'additionalProperties': False,
            'properties': {
                key: {'type': 'array', 'maxItems': 64, 'uniqueItems': True,
                      'items': {'type': 'string', 'pattern': _CLASS}}
                for key in ('required', 'forbidden')}},
    }}
_SERVERS = {
    'type': 'object', 'additionalProperties': False,
    'required': ['flavor'],
    'oneOf': [{'required': ['count']}, {'required': ['names']}],
    'properties': {
        'count': {'type': 'integer', 'minimum': 1, 'maximum': MAX_SERVERS},
        'names': {'type': 'array', 'minItems': 1, 'maxItems': MAX_SERVERS,
                  'uniqueItems': True, 'items': _NAME},
        'flavor': _FLAVOR,
    }}
_GROUP = {
    'type': 'object', 'additionalProperties': False,
    'required': ['name'],
    'properties': {
        'name': _NAME,
        'policies': {'type': 'array', 'maxItems': 16},
        'rules': {'type': 'object', 'maxProperties': 16},
        'llmn': {'type': 'object'},
        'members': {'type': 'array', 'minItems': 1, 'maxItems': 256,
                    'items': {'$ref': '#/definitions/group'}},
        'servers': _SERVERS,
    }}
_END = {'oneOf': [
    _NAME,
    {'type': 'object', 'additionalProperties': False,
     'required': ['server_group'], 'properties': {'server_group': _UUID}},
    {'type': 'object', 'additionalProperties': False,
     'required': ['server'], 'properties': {'server': _UUID}},
]}
SCHEMA = {
    'type': 'object', 'additionalProperties': False, 'required': ['stack'],
    'definitions': {'group': _GROUP},
    'properties': {'stack': {
        'type': 'object', 'additionalProperties': False,
        'required': ['name', 'group'],
        'properties': {
            'name': _NAME,
            'lease_seconds': {'type': 'integer', 'minimum': 1,
                              'maximum': MAX_LEASE_SECONDS},
            'group': {'$ref': '#/definitions/group'},
            'relationships': {
                'type': 'array', 'maxItems': 256,
                'items': {
                    'type': 'object', 'additionalProperties': False,
                    'required': ['from', 'to', 'policies'],
                    'properties': {
                        'from': _NAME, 'to': _END,
                        'policies': {'type': 'array', 'minItems': 1,
                                     'maxItems': 16}}}},
        }}},
}
"""The stack document's shape (stack-document.md); the meaning of
``policies``, ``rules`` and ``llmn`` is checked by the policy parser."""


def _shape_error(error: 'jsonschema.ValidationError') -> StackError:
    """One line naming the field; never echoes a long value."""
    field, problem = validation.describe(error, root='body')
    if error.validator == 'oneOf' and field.endswith('servers'):
        problem = 'give either count or names'
    elif error.validator == 'oneOf':
        problem = ('must be a group name, {"server_group": uuid} or '
                   '{"server": uuid}')
    elif error.validator == 'propertyNames':
        problem = 'names must match ' + _CLASS
    return StackError(field, problem)


def _flavor(data: dict) -> Flavor:
    traits = data.get('traits', {})
    required = frozenset(traits.get('required', ()))
    forbidden = frozenset(traits.get('forbidden', ()))
    return Flavor(dict(data['resources']), required, forbidden)


def _check_flavor(flavor: Flavor, field: str) -> None:
    both = flavor.required & flavor.forbidden
    if both:
        raise StackError(f'{field}.traits', f'{sorted(both)[0]} is both '
                         'required and forbidden')
    if not any(flavor.resources.values()):
        raise StackError(f'{field}.resources', 'asks for nothing')


class _Builder:
    """Turns the validated shape into records, checking what the schema
    cannot: unique names, policy meaning, references."""

    def __init__(self) -> None:
        self.groups: typing.Dict[str, str] = {}
        self.servers: typing.Dict[str, str] = {}

    def _name(self, kind: str, table: typing.Dict[str, str], name: str,
              field: str) -> None:
        if name in table:
            raise StackError(field, f'{kind} {name} is also {table[name]}')
        table[name] = field

    def group(self, data: dict, field: str, depth: int) -> Group:
        if depth > MAX_DEPTH:
            raise StackError(field, f'groups nest at most {MAX_DEPTH} deep')
        name = data['name']
        self._name('group', self.groups, name, f'{field}.name')
        has_members, has_servers = 'members' in data, 'servers' in data
        if has_members == has_servers:
            raise StackError(field, 'a group has either members or servers')
        if has_servers:
            return self._leaf(data, field, name)
        return self._inner(data, field, name, depth)

    def _leaf(self, data: dict, field: str, name: str) -> Group:
        sdata = data['servers']
        sfield = f'{field}.servers'
        flavor = _flavor(sdata['flavor'])
        _check_flavor(flavor, f'{sfield}.flavor')
        names = sdata.get('names') or [
            f'{name}-{i}' for i in range(1, sdata['count'] + 1)]
        for i, server in enumerate(names):
            where = (f'{sfield}.names[{i}]' if 'names' in sdata
                     else f'{sfield}.count')
            self._name('server', self.servers, server, where)
            if len(self.servers) > MAX_SERVERS:
                raise StackError(where, f'a stack has at most {MAX_SERVERS}'
                                 ' servers')
        document = self._document(data, field, len(names))
        if document.rules.size not in (None, len(names)):
            raise StackError(f'{field}.rules.size', f'the group has '
                             f'{len(names)} servers')
        servers = tuple(Server(n, name, flavor) for n in names)
        return Group(name, field, document, servers=servers)

    def _inner(self, data: dict, field: str, name: str,
               depth: int) -> Group:
        if 'llmn' in data:
            raise StackError(f'{field}.llmn', 'llmn applies to a group of '
                             'servers, not to a group of groups')
        rules = data.get('rules')
        for key in (rules if isinstance(rules, dict) else ()):
            if not str(key).startswith(parser.MAX_SERVER_PER):
                raise StackError(f'{field}.rules.{str(key)[:64]}',
                                 'on a group of groups only '
                                 'max_server_per_<scope> applies')
        document = self._document(data, field, None)
        _untargeted(document, field)
        members = tuple(self.group(m, f'{field}.members[{i}]', depth + 1)
                        for i, m in enumerate(data['members']))
        return Group(name, field, document, members=members)

    @staticmethod
    def _document(data: dict, field: str,
                  size: typing.Optional[int]) -> PolicyDocument:
        raw = {k: data[k] for k in ('policies', 'rules', 'llmn')
               if k in data}
        if size is not None and 'llmn' in raw:
            # the stack knows the group's size: LLMN's M is its server count
            rules = dict(raw.get('rules') or {})
            given = rules.setdefault('size', size)
            if given != size:
                raise StackError(f'{field}.rules.size', f'the group has '
                                 f'{size} servers')
            raw['rules'] = rules
        try:
            return parser.parse_document(raw, field)
        except PolicyError as exc:
            raise StackError(exc.field, _short(exc.problem)) from None

    def relationship(self, data: dict, field: str,
                     root: Group) -> Relationship:
        source = data['from']
        target = data['to']
        for key, end in (('from', source), ('to', target)):
            if isinstance(end, str) and end not in self.groups:
                raise StackError(f'{field}.{key}', f'no group {end} in the '
                                 'stack')
        if isinstance(target, dict):
            kind, value = next(iter(target.items()))
            try:
                target = Existing(kind, str(uuid.UUID(value)))
            except ValueError:
                raise StackError(f'{field}.to.{kind}', 'must be a uuid')
        elif _overlap(root, source, target):
            raise StackError(f'{field}.to', f'{source} and {target} share '
                             'servers; a relationship joins two disjoint '
                             'groups')
        try:
            document = parser.parse_document(
                {'policies': data['policies']}, field)
        except PolicyError as exc:
            raise StackError(exc.field, _short(exc.problem)) from None
        _untargeted(document, field)
        return Relationship(source, target, document, field)


def _short(text: str, most: int = 2 * validation.SHORT) -> str:
    return text if len(text) <= most else text[:most] + '...'


def _untargeted(document: PolicyDocument, field: str) -> None:
    for i, policy in enumerate(document.policies):
        if policy.identifier is not None:
            raise StackError(document.field_of(i), 'a policy that targets '
                             'a domain belongs on a group of servers')


def _overlap(root: Group, a: str, b: str) -> bool:
    names = {g.name: g for g in root.walk()}
    first = {s.name for s in names[a].all_servers()}
    return any(s.name in first for s in names[b].all_servers())


def with_leaves(stack: Stack, change: typing.Callable[
        [PolicyDocument], PolicyDocument]) -> Stack:
    """The stack with ``change`` applied to the document of every leaf
    group (the only policies that may target a domain)."""
    def walk(group: Group) -> Group:
        if group.leaf:
            return dataclasses.replace(group, document=change(
                group.document))
        return dataclasses.replace(group, members=tuple(
            walk(m) for m in group.members))
    return dataclasses.replace(stack, root=walk(stack.root))


def with_real_ids(stack: Stack, topology: Topology,
                  project_id: typing.Optional[str]) -> Stack:
    """The stack with every leaf policy that targets a domain in the
    domain's real id (tenants write their own, possibly obfuscated, ids).

    :raises PolicyError: naming the field, for an identifier the tenant
        cannot target.
    """
    return with_leaves(stack, lambda document: topology.to_real(
        document, project_id))


def check_topology(stack: Stack, topology: Topology) -> None:
    """Check a stack against the scopes the cloud defines.

    Every scope a policy or rule names must exist, and every scope with a
    ``parent`` must nest in it (each of its domains inside one domain of
    the parent), so that ``affinity:rack`` implies ``affinity:row``.

    :raises StackError: naming the first field on an unknown scope, or the
        domains that break the nesting.
    """
    for group in stack.root.walk():
        _known_scopes(group.document, topology, group.field)
    for rel in stack.relationships:
        _known_scopes(rel.document, topology, rel.field)
    for scope in sorted(stack.scopes):
        problem = topology.nesting_problem(scope)
        if problem:
            raise StackError(f'scope {scope}', problem)


def _known_scopes(document: PolicyDocument, topology: Topology,
                  field: str) -> None:
    unknown = registry.undefined_scope(
        document, lambda scope: topology.scope(scope) is not None)
    if unknown is not None:
        raise StackError(f'{field}.rules.{unknown.field}' if unknown.rule
                         else unknown.field,
                         f'scope {unknown.scope} is not defined')


def parse(data: object) -> Stack:
    """Validate a stack document (the whole body ``{"stack": {...}}``).

    :raises StackError: naming the first bad field, never echoing more than
        a short prefix of a value.
    """
    error = validation.first_error(_VALIDATOR, data)
    if error is not None:
        raise _shape_error(error)
    body = data['stack']  # type: ignore[index]
    builder = _Builder()
    root = builder.group(body['group'], 'stack.group', 1)
    relationships = tuple(
        builder.relationship(r, f'stack.relationships[{i}]', root)
        for i, r in enumerate(body.get('relationships', ())))
    return Stack(body['name'],
                 body.get('lease_seconds', DEFAULT_LEASE_SECONDS),
                 root, relationships)


_VALIDATOR = jsonschema.Draft7Validator(SCHEMA)
