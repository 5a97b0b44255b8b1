"""Proposal A of heat-policy-extension.txt, turned into a stack document.

Pure: no Heat here. :func:`translate` takes Proposal A's ``groups``
section (a :class:`Group <SCHEMA>` as the spec defines it, with ``id``,
``members``, ``metadata``, ``policies`` and ``relationships``) plus what the
template says of the resources it names, and answers the stack document of
``shared/contracts/stack-document.md``; :func:`validate` also parses that
with :func:`nova_scoped_policies.stacks.model.parse`. Every error is a
:class:`ProposalError` naming the field in Proposal A's terms
(``groups.members[1].policies[0].type``).

The policy types (:data:`MAPPINGS`, also the table of
doc/source/user/heat.rst):

* ``OS::AntiCoLocation`` / ``OS::CoLocation`` ``{level, hardConstraint}``:
  ``anti-affinity:LEVEL`` / ``affinity:LEVEL``, their ``soft-`` forms when
  ``hardConstraint`` is false. On a group of groups they apply across its
  members (the spec's "applying a dyadic policy to GP is applying it to the
  pair {GL, GR}"), in a relationship to every pair across its two ends.
* ``OS::LLMNAntiCoLocation`` (or ``OS::LLMN``) ``{L1, L2, N}``: our
  ``llmn`` shorthand on a group of servers (M is the group's size).
* ``OS::LicensedProductPresence`` ``{product, hardConstraint}``:
  ``license:PRODUCT`` and ``soft-license-pack:PRODUCT`` (hard, the default),
  ``soft-license-pack:PRODUCT`` only when soft. Monadic: on a group of
  groups it applies to every server under it.

Anything else is refused naming the type: network policies (``OS::Net*``,
e.g. ``OS::NetMaxHops``), volume policies (``OS::Vol*``, e.g.
``OS::VolExclusive``, ``OS::VolNotMoved``) and unknown types alike.
"""

import dataclasses
import re
import typing
import uuid

import jsonschema
import yaml

from nova_scoped_policies.policy.errors import shown
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy import parser
from nova_scoped_policies.stacks import model
from nova_scoped_policies import validation

SERVER_TYPE = 'OS::Nova::Server'
"""The only resource type a group member may be: the servers we place."""
MAX_TEXT = 65536
"""Longest ``groups`` text :func:`load` reads."""
MAX_NESTING = 32
"""Deepest nesting of lists and objects a document may have (groups nest
at most :data:`model.MAX_DEPTH` deep; metadata adds a little)."""
HOST_LEVELS = ('compute_node', 'PM')
"""The spec's names of the host level (its examples and its datacenter
model); they mean our ``host`` scope. Other levels are scope names."""

DYADIC, LLMN, MONADIC = 'dyadic', 'llmn', 'monadic'


class ProposalError(model.StackError):
    """A Proposal A document is invalid or says what we cannot do: a
    :class:`~nova_scoped_policies.stacks.model.StackError` whose ``field``
    is Proposal A's, e.g. ``groups.members[1].policies[0].type`` (never
    ``stack.``...), its ``message`` echoing values bounded.
    """


@dataclasses.dataclass(frozen=True)
class TemplateResource:
    """What the template says of a resource a member or relationship names.

    :param type: its resource type (``OS::Nova::Server``...).
    :param flavor: the flavor name an ``OS::Nova::Server`` boots with, as
        its ``flavor`` property gives it; None when not known.
    """

    type: str
    flavor: typing.Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Mapping:
    """How one Proposal A policy type becomes our policy words.

    :param type: the Proposal A type.
    :param kind: :data:`DYADIC` (between two members or ends),
        :data:`LLMN` (our ``llmn`` on a group of servers) or
        :data:`MONADIC` (every server of the subtree).
    :param hard: our words for the hard form (``{}`` is the level or the
        product).
    :param soft: our words when ``hardConstraint`` is false; None when the
        type has no soft form.
    :param schema: the JSON schema of its ``properties``.
    """

    type: str
    kind: str
    hard: typing.Tuple[str, ...]
    soft: typing.Optional[typing.Tuple[str, ...]]
    schema: typing.Mapping[str, typing.Any]


_WORD = {'type': 'string', 'pattern': rf'^{parser.SCOPE_PATTERN}$',
         'x-problem': {'pattern': 'must be 1-64 letters, digits, "_", "." '
                                  'or "-", starting with a letter or digit'}}
_HARD = {'type': 'boolean'}


def _properties(required: typing.Sequence[str],
                **props: typing.Any) -> typing.Dict[str, typing.Any]:
    return {'type': 'object', 'additionalProperties': False,
            'required': list(required), 'properties': props}


_COLOCATION = _properties(['level'], level=_WORD, hardConstraint=_HARD)
_LLMN = _properties(
    ['L1', 'L2', 'N'], L1=_WORD, L2=_WORD,
    N={'type': 'integer', 'minimum': 1, 'maximum': parser.MAX_INT},
    hardConstraint={'const': True, 'x-problem': 'LLMN is hard only here '
                    '(its soft form would be OS::AntiCoLocation with '
                    'hardConstraint: false)'})
_LICENSE = _properties(
    ['product'], product=_WORD, hardConstraint=_HARD,
    catalog={'not': {}, 'x-problem': 'this cloud has one catalog, its '
             'own (aggregates and traits that allow a product): give the '
             'product only'})

MAPPINGS: typing.Mapping[str, Mapping] = {m.type: m for m in (
    Mapping('OS::AntiCoLocation', DYADIC, ('anti-affinity:{}',),
            ('soft-anti-affinity:{}',), _COLOCATION),
    Mapping('OS::CoLocation', DYADIC, ('affinity:{}',), ('soft-affinity:{}',),
            _COLOCATION),
    Mapping('OS::LLMNAntiCoLocation', LLMN, ('llmn',), None, _LLMN),
    Mapping('OS::LLMN', LLMN, ('llmn',), None, _LLMN),
    Mapping('OS::LicensedProductPresence', MONADIC,
            ('license:{}', 'soft-license-pack:{}'), ('soft-license-pack:{}',),
            _LICENSE),
)}
"""Every Proposal A policy type we express, by type."""

_VALIDATORS = {name: jsonschema.Draft7Validator(m.schema)
               for name, m in MAPPINGS.items()}

_NAME = model.SCHEMA['definitions']['group']['properties']['name']
_TID = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_OBJECT = {'type': 'object', 'maxProperties': 64}
_POLICIES = {
    'type': 'array', 'minItems': 1, 'maxItems': 16,
    'items': {'type': 'object', 'additionalProperties': False,
              'required': ['type'],
              'properties': {'type': _TID, 'properties': _OBJECT,
                             'metadata': _OBJECT}}}
_REFERENCE = {
    'if': {'type': 'string'},
    'then': {'maxLength': 36},
    'else': {'type': 'object', 'minProperties': 1, 'maxProperties': 1,
             'additionalProperties': False,
             'properties': {'get_resource': _TID, 'get_group': _TID},
             'x-problem': {
                 'additionalProperties': 'a reference is {get_resource: '
                 'TID}, {get_group: TID} or an existing server\'s id',
                 'type': 'a reference is {get_resource: TID}, {get_group: '
                 'TID} or an existing server\'s id'}}}
_MEMBER = {
    'if': {'type': 'object', 'required': ['get_resource']},
    'then': {'additionalProperties': False,
             'properties': {'get_resource': _TID},
             'x-problem': {'additionalProperties': 'a member is a group or '
                           '{get_resource: TID} alone'}},
    'else': {'$ref': '#/definitions/group'}}
_GROUP = {
    'type': 'object', 'additionalProperties': False,
    'required': ['id', 'members'],
    'properties': {
        'id': _NAME,
        'members': {'type': 'array', 'minItems': 1, 'maxItems': 256,
                    'items': _MEMBER},
        'metadata': _OBJECT,
        'policies': _POLICIES,
        'relationships': {
            'type': 'array', 'maxItems': 64,
            'items': {'type': 'object', 'additionalProperties': False,
                      'required': ['related', 'policies'],
                      'properties': {'related': _REFERENCE,
                                     'policies': _POLICIES}}},
    }}
_FLAVOR = model.SCHEMA['definitions']['group']['properties']['servers'][
    'properties']['flavor']
SCHEMA = {
    'type': 'object', 'additionalProperties': False,
    'required': ['name', 'groups', 'flavors'],
    'definitions': {'group': _GROUP},
    'properties': {
        'name': _NAME,
        'lease_seconds': {'type': 'integer', 'minimum': 1,
                          'maximum': model.MAX_LEASE_SECONDS},
        'flavors': {'type': 'array', 'minItems': 1, 'maxItems': 64,
                    'items': {**_FLAVOR, 'required': ['name', 'resources'],
                              'properties': {**_FLAVOR['properties'],
                                             'name': _TID}}},
        'groups': {'$ref': '#/definitions/group'},
    }}
"""The document :func:`translate` reads: the resource's properties, with
``groups`` the spec's Group (the root of the tree) and ``flavors`` what
scheduling needs of each Nova flavor the servers boot with."""
_VALIDATOR = jsonschema.Draft7Validator(SCHEMA)


# -- loading the groups text -------------------------------------------------

def load(text: str, field: str = 'groups') -> object:
    """The data of a YAML (or JSON) text, bounded.

    :raises ProposalError: naming ``field`` for a text too long, too deeply
        nested, with aliases, or not YAML.
    """
    if len(text) > MAX_TEXT:
        raise ProposalError(field, f'is longer than {MAX_TEXT} characters')
    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise ProposalError(field, 'YAML aliases (*name) are not '
                                    'accepted')
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_NESTING:
                    raise ProposalError(field, 'nests deeper than '
                                        f'{MAX_NESTING} levels')
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f' (line {mark.line + 1})' if mark else ''
        problem = getattr(exc, 'problem', None) or 'cannot be read'
        raise ProposalError(field, f'is not YAML or JSON: '
                            f'{str(problem)[:validation.SHORT]}{where}'
                            ) from None


def _too_deep(data: object) -> bool:
    """Whether ``data`` nests deeper than :data:`MAX_NESTING` (walked
    without recursion)."""
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_NESTING:
                return True
            values = item.values() if isinstance(item, dict) else item
            stack.extend((v, depth + 1) for v in values)
    return False


# -- translating --------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Related:
    """A group's relationship, translated once every group is known.

    :param source: the group's id.
    :param field: the relationship's field.
    :param data: the relationship as written.
    """

    source: str
    field: str
    data: typing.Mapping[str, typing.Any]


@dataclasses.dataclass(frozen=True)
class _Leaf:
    """A group of servers being built: its servers' flavor and where the
    first server that gave it is."""

    flavor: str
    field: str


class _Translator:
    """One document's walk: the stack document, and for each of its fields
    the Proposal A field it comes from (to name errors of the model)."""

    def __init__(self, flavors: typing.Sequence[dict],
                 resources: typing.Mapping[str, TemplateResource]) -> None:
        self.flavors: typing.Dict[str, int] = {}
        for i, flavor in enumerate(flavors):
            if flavor['name'] in self.flavors:
                raise ProposalError(f'flavors[{i}].name', 'flavor '
                                    f'{shown(flavor["name"])} is described '
                                    'twice')
            self.flavors[flavor['name']] = i
        self.flavor_data = flavors
        self.resources = resources
        self.paths: typing.Dict[str, str] = {}
        self.groups: typing.Dict[str, str] = {}     # id -> field
        self.servers: typing.Dict[str, str] = {}    # TID -> member field
        self.leaf_of: typing.Dict[str, str] = {}    # TID -> leaf group
        self.sizes: typing.Dict[str, int] = {}      # leaf group -> servers
        self.relationships: typing.List[_Related] = []

    def _map(self, out: str, field: str) -> None:
        self.paths[out] = field

    def _group_name(self, name: str, field: str) -> None:
        if name in self.groups:
            raise ProposalError(field, f'group {name} is also '
                                f'{self.groups[name]}')
        self.groups[name] = field

    # groups

    def group(self, data: dict, field: str, out: str, depth: int,
              inherited: typing.Sequence[typing.Tuple[str, str]]) -> dict:
        if depth > model.MAX_DEPTH:
            raise ProposalError(field, 'groups nest at most '
                                f'{model.MAX_DEPTH} deep')
        self._group_name(data['id'], f'{field}.id')
        self._map(out, field)
        self._map(f'{out}.name', f'{field}.id')
        words, llmn, monadic = self._policies(data.get('policies', ()),
                                              f'{field}.policies')
        monadic = list(inherited) + monadic
        members = data['members']
        result: typing.Dict[str, typing.Any] = {'name': data['id']}
        if all('get_resource' in m for m in members):
            self._leaf(result, [(m['get_resource'], f'{field}.members[{i}]')
                                for i, m in enumerate(members)], out)
            words += [(w, at) for w, at in monadic
                      if all(w != known for known, _ in words)]
        else:
            if llmn:
                raise ProposalError(llmn[1], 'LLMN spreads the servers of a '
                                    'group of servers; this group holds '
                                    'groups')
            result['members'] = [
                self._member(m, f'{field}.members[{i}]',
                             f'{out}.members[{i}]', depth, monadic)
                for i, m in enumerate(members)]
        self._words(result, words, out)
        if llmn:
            result['llmn'] = llmn[0]
            for ours, theirs in (('', ''), ('.level1', '.L1'),
                                 ('.level2', '.L2'), ('.n', '.N')):
                self._map(f'{out}.llmn{ours}', f'{llmn[1]}{theirs}')
        for i, rel in enumerate(data.get('relationships', ())):
            self.relationships.append(
                _Related(data['id'], f'{field}.relationships[{i}]', rel))
        return result

    def _member(self, data: dict, field: str, out: str, depth: int,
                monadic: typing.Sequence[typing.Tuple[str, str]]) -> dict:
        if 'get_resource' not in data:
            return self.group(data, field, out, depth + 1, monadic)
        # a server beside groups: a group of its own, named after it (the
        # spec's policies on the parent apply between it and the groups)
        tid = data['get_resource']
        self._group_name(tid, field)
        self._map(out, field)
        result = {'name': tid}
        self._leaf(result, [(tid, field)], out)
        self._words(result, list(monadic), out)
        return result

    def _words(self, result: dict,
               words: typing.Sequence[typing.Tuple[str, str]],
               out: str) -> None:
        """Our policy words into the group ``result``, each mapped to the
        Proposal A policy it comes from."""
        for i, (word, where) in enumerate(words):
            self._map(f'{out}.policies[{i}]', where)
        if words:
            result['policies'] = [word for word, _ in words]

    def _leaf(self, result: dict,
              members: typing.Sequence[typing.Tuple[str, str]],
              out: str) -> None:
        """``result`` a group of the servers ``members`` (TID, field)."""
        leaf: typing.Optional[_Leaf] = None
        for i, (tid, where) in enumerate(members):
            flavor = self._server(tid, where)
            if leaf is None:
                leaf = _Leaf(flavor, where)
            elif flavor != leaf.flavor:
                raise ProposalError(where, f'{tid} boots flavor '
                                    f'{shown(flavor)} and {leaf.field} '
                                    f'{shown(leaf.flavor)}: the servers of '
                                    'one group share a flavor here; give '
                                    'them groups of their own')
            self._map(f'{out}.servers.names[{i}]', where)
            self.leaf_of[tid] = result['name']
        assert leaf is not None     # the schema asks for one member
        index = self.flavors[leaf.flavor]
        self._map(f'{out}.servers.flavor', f'flavors[{index}]')
        flavor = {k: v for k, v in self.flavor_data[index].items()
                  if k != 'name'}
        result['servers'] = {'names': [tid for tid, _ in members],
                             'flavor': flavor}
        self.sizes[result['name']] = len(members)

    def _server(self, tid: str, field: str) -> str:
        """The flavor of the server ``tid`` (placed here, once)."""
        where = f'{field}.get_resource'
        found = self.resources.get(tid)
        if found is None:
            raise ProposalError(where, f'no resource {shown(tid)} in the '
                                'template')
        if found.type != SERVER_TYPE:
            raise ProposalError(where, f'{shown(tid)} is a {found.type}: '
                                'only OS::Nova::Server resources are placed '
                                'by the scoped policy service (volumes and '
                                'their attachments are Cinder\'s)')
        if tid in self.servers:
            raise ProposalError(where, f'{shown(tid)} is also '
                                f'{self.servers[tid]}: a resource is in '
                                'exactly one group')
        self.servers[tid] = field
        if found.flavor is None:
            raise ProposalError(where, f'the flavor of {shown(tid)} is not '
                                'known at validation: give it as a name or '
                                'get_param')
        if found.flavor not in self.flavors:
            raise ProposalError(where, f'{shown(tid)} boots flavor '
                                f'{shown(found.flavor)}, which flavors does '
                                'not describe')
        return found.flavor

    # policies

    def _policies(self, policies: typing.Sequence[dict], field: str,
                  dyadic_only: bool = False):
        """(words with their fields, llmn (dict, field) or None, monadic
        words with their fields)."""
        words: typing.List[typing.Tuple[str, str]] = []
        monadic: typing.List[typing.Tuple[str, str]] = []
        llmn = None
        for i, policy in enumerate(policies):
            where = f'{field}[{i}]'
            mapping = _mapping(policy['type'], f'{where}.type')
            props = policy.get('properties', {})
            error = validation.first_error(_VALIDATORS[mapping.type], props)
            if error is not None:
                key, problem = validation.describe(error)
                raise ProposalError(validation.join(
                    f'{where}.properties', key), problem)
            if dyadic_only and mapping.kind != DYADIC:
                raise ProposalError(f'{where}.type', f'{mapping.type} '
                                    'applies to one group, not to a '
                                    'relationship')
            if mapping.kind == LLMN:
                if llmn is not None:
                    raise ProposalError(f'{where}.type', 'one LLMN policy '
                                        f'per group ({llmn[1]} is one)')
                llmn = ({'level1': _level(props['L1']),
                         'level2': _level(props['L2']), 'n': props['N']},
                        f'{where}.properties')
                continue
            hard = props.get('hardConstraint', True)
            forms = mapping.hard if hard else mapping.soft
            argument = (_level(props['level']) if mapping.kind == DYADIC
                        else props['product'])
            out = words if mapping.kind == DYADIC else monadic
            for form in forms or ():
                word = form.format(argument)
                if all(word != w for w, _ in out):
                    out.append((word, where))
        return words, llmn, monadic

    # relationships

    def relationship(self, related: _Related, out: str) -> dict:
        source, field, data = related.source, related.field, related.data
        self._map(out, field)
        self._map(f'{out}.from', field)
        self._map(f'{out}.to', f'{field}.related')
        words, _, _ = self._policies(data['policies'], f'{field}.policies',
                                     dyadic_only=True)
        for i, (_, where) in enumerate(words):
            self._map(f'{out}.policies[{i}]', where)
        return {'from': source, 'to': self._end(data['related'], field),
                'policies': [w for w, _ in words]}

    def _end(self, related: object, field: str) -> object:
        if isinstance(related, str):
            try:
                return {'server': str(uuid.UUID(related))}
            except ValueError:
                raise ProposalError(f'{field}.related', f'{shown(related)}: '
                                    'a resource id must be an existing '
                                    'server\'s uuid') from None
        assert isinstance(related, dict)
        if 'get_group' in related:
            name = related['get_group']
            if name not in self.groups:
                raise ProposalError(f'{field}.related.get_group', 'no group '
                                    f'{shown(name)} in groups')
            return name
        tid = related['get_resource']
        where = f'{field}.related.get_resource'
        found = self.resources.get(tid)
        if found is not None and found.type != SERVER_TYPE:
            raise ProposalError(where, f'{shown(tid)} is a {found.type}: '
                                'a relationship relates servers')
        if tid not in self.leaf_of:
            raise ProposalError(where, f'{shown(tid)} is not a server of '
                                'groups')
        leaf = self.leaf_of[tid]
        if self.sizes[leaf] != 1:
            raise ProposalError(where, f'{shown(tid)} shares group {leaf} '
                                'with other servers: relate to the group '
                                '({get_group: ...}) or give the server a '
                                'group of its own')
        return leaf


def _mapping(ptype: str, field: str) -> Mapping:
    found = MAPPINGS.get(ptype)
    if found is not None:
        return found
    if ptype.startswith('OS::Net'):
        why = ('is a network policy: the scoped policy service places '
               'servers on hosts and cannot express it (the network is '
               'Neutron\'s)')
    elif ptype.startswith('OS::Vol'):
        why = ('is a volume policy: the scoped policy service places '
               'servers on hosts and cannot express it (volumes are '
               'Cinder\'s)')
    else:
        why = f'is not a policy type we express; expected one of ' \
              f'{", ".join(MAPPINGS)}'
    raise ProposalError(field, f'{shown(ptype)} {why}')


def _level(level: str) -> str:
    return HOST_SCOPE if level in HOST_LEVELS else level


def _check_shape(document: object) -> None:
    if _too_deep(document):
        raise ProposalError('groups', f'nests deeper than {MAX_NESTING} '
                            'levels')
    error = validation.first_error(_VALIDATOR, document)
    if error is not None:
        raise ProposalError(*validation.describe(error, root='document'))


def _translate(document: object,
               resources: typing.Mapping[str, TemplateResource]
               ) -> typing.Tuple[dict, typing.Dict[str, str]]:
    _check_shape(document)
    assert isinstance(document, dict)
    walk = _Translator(document['flavors'], resources)
    stack: typing.Dict[str, typing.Any] = {'name': document['name']}
    walk.paths.update({'stack': 'groups', 'stack.name': 'name',
                       'stack.lease_seconds': 'lease_seconds'})
    if 'lease_seconds' in document:
        stack['lease_seconds'] = document['lease_seconds']
    stack['group'] = walk.group(document['groups'], 'groups', 'stack.group',
                                1, ())
    if walk.relationships:
        stack['relationships'] = [
            walk.relationship(related, f'stack.relationships[{i}]')
            for i, related in enumerate(walk.relationships)]
    return {'stack': stack}, walk.paths


def translate(document: object,
              resources: typing.Mapping[str, TemplateResource]) -> dict:
    """The stack document ``{"stack": {...}}`` that Proposal A's
    ``document`` means (see :data:`SCHEMA`).

    :param document: ``{name, lease_seconds, flavors, groups}``.
    :param resources: the template's resources by name (TID).
    :raises ProposalError: naming the field, for a document that does not
        follow the grammar, names what is not a server of the template, or
        asks for a policy we cannot express.
    """
    return _translate(document, resources)[0]


def validate(document: object,
             resources: typing.Mapping[str, TemplateResource]) -> dict:
    """:func:`translate`, then the stack document checked by the stack
    model (policy meaning, sizes, relationships); its errors are named in
    Proposal A's fields.

    :raises ProposalError: as :func:`translate`, or the model's error.
    """
    stack, paths = _translate(document, resources)
    try:
        model.parse(stack)
    except model.StackError as exc:
        message = _STACK_FIELD.sub(
            lambda found: _origin(found.group(0), paths), exc.message)
        raise ProposalError(_origin(exc.field, paths), message) from None
    return stack


_STACK_FIELD = re.compile(r'\bstack(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*')
"""A field of the stack document, as a message of the model quotes it."""


def _origin(field: str, paths: typing.Mapping[str, str]) -> str:
    """The Proposal A field the stack document's ``field`` comes from: that
    of its longest known prefix."""
    best = ''
    for known in paths:
        if len(known) > len(best) and (
                field == known or field.startswith((f'{known}.',
                                                    f'{known}['))):
            best = known
    return paths[best] if best else field
