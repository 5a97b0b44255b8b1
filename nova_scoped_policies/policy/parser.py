"""Parse and validate group policy documents.

Accepted shapes (``shared/contracts/policy-document.md``):

* the scoped document ``{"policies": [...], "rules": {...}}``;
* the LLMN shorthand
  ``{"llmn": {"level1", "level2", "n"}, "rules": {"size"}}``,
  stored as its expansion;
* complex-anti-affinity.rst's object form
  ``{"policy": {"name": "anti-affinity", "rules": {...}}}``;
* Nova's own groups: ``{"policy": "anti-affinity", "rules": {...}}`` or the
  legacy ``{"policies": ["anti-affinity"]}``.

Every error is a :class:`PolicyError` naming the field and the value.
"""

import math
import re
import typing

from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.errors import shown
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules

SCOPE_PATTERN = r'[A-Za-z0-9][A-Za-z0-9_.-]{0,63}'
_SCOPE_RE = re.compile(SCOPE_PATTERN + r'\Z')
_IDENTIFIER_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.:-]{0,254}\Z')
_NAME_MAX = 255

MAX_SERVER_PER = 'max_server_per_'
MIN_DOMAINS = 'min_domains_'
SIZE = 'size'

_DOCUMENT_KEYS = ('name', 'policies', 'rules', 'llmn', 'policy')
_LLMN_KEYS = ('level1', 'level2', 'n')


def vocabulary() -> typing.Mapping[str, PolicyType]:
    """word -> policy type: the types the registered plugins own
    (``engine/plugins/registry.py``), in the registry's order. A policy
    type exists for the parser once a plugin owns it."""
    # imported here: the plugins import this package
    from nova_scoped_policies.engine.plugins import registry
    return registry.vocabulary()


def _join(prefix: str, field: str) -> str:
    return f'{prefix}.{field}' if prefix else field


def validate_scope_name(field: str, value: object) -> str:
    """Return ``value`` if it is a valid scope name, else raise.

    :param field: the field to name in the error.
    :param value: the candidate scope name.
    """
    if not isinstance(value, str) or not _SCOPE_RE.match(value):
        raise PolicyError(
            field, value,
            'a scope name is 1-64 letters, digits, "_", "." or "-", '
            'starting with a letter or digit')
    return value


MAX_INT = 1000000
"""Largest value of a rule: no group holds a million servers."""


def _positive_int(field: str, value: object) -> int:
    # Nova keeps group rules as strings ("3"); accept ASCII digits, refuse
    # bools, other digits ("²") and huge numbers.
    if isinstance(value, str) and value.isascii() and value.isdigit() \
            and len(value) <= 7:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyError(field, value, 'must be an integer >= 1')
    if value < 1:
        raise PolicyError(field, value, 'must be an integer >= 1')
    if value > MAX_INT:
        raise PolicyError(field, value, f'must be at most {MAX_INT}')
    return value


def parse_policy(text: object, field: str = 'policy') -> Policy:
    """Parse one ``TYPE[:SCOPE[:IDENTIFIER]]`` string.

    :param text: the policy string.
    :param field: the field to name in errors, e.g. ``policies[2]``.
    :raises PolicyError: when the string is malformed.
    """
    if not isinstance(text, str):
        raise PolicyError(field, text, 'a policy is a string '
                          'TYPE[:SCOPE[:IDENTIFIER]]')
    parts = text.split(':', 2)
    known = vocabulary()
    ptype = known.get(parts[0])
    if ptype is None:
        raise PolicyError(field, text, 'unknown policy type '
                          f'{shown(parts[0])}; expected one of '
                          f'{", ".join(known)}')
    scope = HOST_SCOPE
    if len(parts) > 1:
        scope = parts[1]
        if not _SCOPE_RE.match(scope):
            raise PolicyError(field, text, f'invalid scope {shown(scope)}: a '
                              'scope name is 1-64 letters, digits, "_", "." '
                              'or "-"')
    identifier = None
    if len(parts) > 2:
        identifier = parts[2]
        if not _IDENTIFIER_RE.match(identifier):
            raise PolicyError(field, text, f'invalid identifier '
                              f'{shown(identifier)}: expected a domain id')
    return Policy(ptype, scope, identifier)


def _parse_rules(data: object, field: str) -> typing.Dict[str, typing.Any]:
    if not isinstance(data, dict):
        raise PolicyError(field, data, 'rules must be an object')
    max_per: typing.Dict[str, int] = {}
    min_dom: typing.Dict[str, int] = {}
    size = None
    for key, value in data.items():
        kfield = f'{field}.{key}'
        if key == SIZE:
            size = _positive_int(kfield, value)
        elif isinstance(key, str) and key.startswith(MAX_SERVER_PER):
            scope = validate_scope_name(kfield, key[len(MAX_SERVER_PER):])
            max_per[scope] = _positive_int(kfield, value)
        elif isinstance(key, str) and key.startswith(MIN_DOMAINS):
            scope = validate_scope_name(kfield, key[len(MIN_DOMAINS):])
            min_dom[scope] = _positive_int(kfield, value)
        else:
            raise PolicyError(kfield, value, 'unknown rule; expected '
                              'max_server_per_<scope>, min_domains_<scope> '
                              'or size')
    return {'max_server_per': max_per, 'min_domains': min_dom, 'size': size}


def _expand_llmn(data: object, rules: dict, policies: list,
                 prefix: str) -> None:
    """Expand the LLMN shorthand into ``policies`` and ``rules`` in place."""
    field = _join(prefix, 'llmn')
    if not isinstance(data, dict):
        raise PolicyError(field, data, 'llmn must be an object with '
                          'level1, level2 and n')
    for key in data:
        if key not in _LLMN_KEYS:
            raise PolicyError(f'{field}.{key}', data[key],
                              'unknown key; expected level1, level2, n')
    for key in _LLMN_KEYS:
        if key not in data:
            raise PolicyError(f'{field}.{key}', None, 'is required')
    level1 = validate_scope_name(f'{field}.level1', data['level1'])
    level2 = validate_scope_name(f'{field}.level2', data['level2'])
    n = _positive_int(f'{field}.n', data['n'])
    if level1 == level2:
        raise PolicyError(f'{field}.level2', level2,
                          'must differ from level1')
    size = rules['size']
    if size is None:
        raise PolicyError(_join(prefix, 'rules.size'), None,
                          'llmn needs the group size M in rules.size')
    if n > size:
        raise PolicyError(f'{field}.n', n, f'cannot spread {size} '
                          f'member(s) over at least {n} {level1} domains')
    for scope, table, key in ((level1, 'max_server_per', MAX_SERVER_PER),
                              (level1, 'min_domains', MIN_DOMAINS),
                              (level2, 'max_server_per', MAX_SERVER_PER)):
        if scope in rules[table]:
            raise PolicyError(_join(prefix, f'rules.{key}{scope}'),
                              rules[table][scope],
                              'is set by llmn; do not set it as well')
    rules['max_server_per'][level1] = math.ceil(size / n)
    rules['min_domains'][level1] = n
    for scope in (level2, level1):
        policies.append((f'{field}', Policy(PolicyType.ANTI_AFFINITY,
                                            scope)))


def _nova_policy(data: object, rules_field: str, field: str,
                 rules_data: object) -> typing.Tuple[Policy, object]:
    """Nova's ``policy`` string or complex-anti-affinity's object form."""
    if isinstance(data, dict):
        for key in data:
            if key not in ('name', 'rules'):
                raise PolicyError(f'{field}.{key}', data[key],
                                  'unknown key; expected name, rules')
        if 'name' not in data:
            raise PolicyError(f'{field}.name', None, 'is required')
        if 'rules' in data and rules_data is not None:
            raise PolicyError(f'{field}.rules', data['rules'],
                              'give rules once, here or at the top level')
        return (parse_policy(data['name'], f'{field}.name'),
                data.get('rules', rules_data))
    return parse_policy(data, field), rules_data


def _name(data: dict, prefix: str) -> typing.Optional[str]:
    """A document's ``name``, checked."""
    name = data.get('name')
    if name is not None and (not isinstance(name, str)
                             or not 0 < len(name) <= _NAME_MAX):
        raise PolicyError(_join(prefix, 'name'), name,
                          f'must be a string of 1-{_NAME_MAX} characters')
    return name


def _keys_known(data: object, known: typing.Sequence[str],
                prefix: str) -> dict:
    """``data`` if it is an object of ``known`` keys only."""
    if not isinstance(data, dict):
        raise PolicyError(prefix or 'document', data,
                          'a policy document is an object')
    for key in data:
        if key not in known:
            raise PolicyError(_join(prefix, str(key)), data[key],
                              'unknown key; expected one of '
                              + ', '.join(known))
    return data


def parse_document(data: object, prefix: str = '') -> PolicyDocument:
    """Validate a policy document and return its normalised form.

    :param data: the decoded JSON/YAML document.
    :param prefix: prepended to every field name in errors, e.g. the
        scheduler hint name.
    :raises PolicyError: naming the first bad field.
    """
    data = _keys_known(data, _DOCUMENT_KEYS, prefix)
    name = _name(data, prefix)
    rules_data = data.get('rules')
    fielded: typing.List[typing.Tuple[str, Policy]] = []
    if 'policy' in data:
        if 'policies' in data:
            raise PolicyError(_join(prefix, 'policy'), data['policy'],
                              'give either policy or policies, not both')
        policy, rules_data = _nova_policy(
            data['policy'], _join(prefix, 'rules'), _join(prefix, 'policy'),
            rules_data)
        fielded.append((_join(prefix, 'policy'), policy))
    raw_policies = data.get('policies', [])
    if not isinstance(raw_policies, list):
        raise PolicyError(_join(prefix, 'policies'), raw_policies,
                          'must be a list of policy strings')
    for i, text in enumerate(raw_policies):
        field = _join(prefix, f'policies[{i}]')
        fielded.append((field, parse_policy(text, field)))
    rules = _parse_rules({} if rules_data is None else rules_data,
                         _join(prefix, 'rules'))
    if 'llmn' in data:
        _expand_llmn(data['llmn'], rules, fielded, prefix)
    return build_document(fielded, Rules(**rules), name, prefix)


_OBJECT_KEYS = ('name', 'policy', 'llmn')


def parse_objects(data: object, prefix: str = '') -> PolicyDocument:
    """complex-anti-affinity.rst's REST form, as the policy API speaks it
    from microversion 1.3: ``{"policy": {"name": P, "rules": {...}}}``,
    or a list of such objects for a group of several policies (their
    rules apply to the group together; a rule given twice is refused),
    with ``name`` and the ``llmn`` shorthand beside it. A group needs a
    policy.

    :param data: the decoded ``server_group`` object, less its envelope
        keys (``id``, ``project_id``).
    :param prefix: prepended to every field name in errors.
    :raises PolicyError: naming the first bad field.
    """
    data = _keys_known(data, _OBJECT_KEYS, prefix)
    if 'policy' not in data and 'llmn' not in data:
        raise PolicyError(_join(prefix, 'policy'), None,
                          'is required: a group needs a policy')
    items = data.get('policy', [])
    single = isinstance(items, dict)
    if single:
        items = [items]
    if not isinstance(items, list) or ('policy' in data and not items):
        raise PolicyError(_join(prefix, 'policy'), data.get('policy'),
                          'must be a policy object or a non-empty list '
                          'of them')
    fielded: typing.List[typing.Tuple[str, Policy]] = []
    merged: typing.Dict[str, typing.Any] = {}
    origin: typing.Dict[str, str] = {}   # rule -> the rules it came from
    for i, item in enumerate(items):
        field = _join(prefix, 'policy' if single else f'policy[{i}]')
        if not isinstance(item, dict):
            raise PolicyError(field, item, 'a policy object is '
                              '{"name": ..., "rules": {...}}')
        policy, rules = _nova_policy(item, f'{field}.rules', field, None)
        fielded.append((f'{field}.name', policy))
        if rules is None:
            continue
        if not isinstance(rules, dict):
            raise PolicyError(f'{field}.rules', rules,
                              'rules must be an object')
        for key, value in rules.items():
            if key in merged:
                raise PolicyError(f'{field}.rules.{key}', value,
                                  'given twice')
            merged[key] = value
            origin[str(key)] = f'{field}.rules'
    name = _name(data, prefix)
    if 'llmn' in data and SIZE not in merged:
        raise PolicyError(_join(prefix, 'policy'), data.get('policy'),
                          'llmn needs the group size M: give it as rules.size '
                          'of a policy object')
    top = _join(prefix, 'rules') + '.'
    try:
        parsed = _parse_rules(merged, _join(prefix, 'rules'))
        if 'llmn' in data:
            _expand_llmn(data['llmn'], parsed, fielded, prefix)
        return build_document(fielded, Rules(**parsed), name, prefix)
    except PolicyError as exc:
        # a rule's error names the policy object that gave it
        key = exc.field[len(top):] if exc.field.startswith(top) else None
        if key not in origin:
            raise
        raise PolicyError(f'{origin[key]}.{key}', exc.value,
                          exc.problem) from None


def as_objects(document: PolicyDocument) -> typing.Union[
        None, dict, typing.List[dict]]:
    """The document in :func:`parse_objects`' form: one policy object,
    or a list when it has several, each rule with the policy of its scope
    (else the first), ``rules`` ``{}`` when none; None for a document
    with no policy."""
    if not document.policies:
        return None
    found = [{'name': str(p), 'rules': {}} for p in document.policies]
    scopes = [p.scope for p in document.policies]
    for key, value in document.rules.to_dict().items():
        scope = next((key[len(start):] for start in
                      (MAX_SERVER_PER, MIN_DOMAINS) if key.startswith(start)),
                     None)
        index = scopes.index(scope) if scope in scopes else 0
        found[index]['rules'][key] = value
    return found[0] if len(found) == 1 else found


def build_document(fielded: typing.Sequence[typing.Tuple[str, Policy]],
                   rules: Rules, name: typing.Optional[str] = None,
                   prefix: str = '',
                   written: typing.Mapping[Policy, str] = {}
                   ) -> PolicyDocument:
    """Check policies and rules together and build the document.

    :param fielded: (field name, policy) pairs, in order.
    :param rules: the parsed rules.
    :param name: the document name.
    :param prefix: prepended to rule field names in errors.
    :param written: policy -> how the caller wrote it, when its identifier
        is the real one (see ``PolicyDocument.written``): errors name it
        that way, and the document keeps it.
    :raises PolicyError: on duplicates, contradictions or rules that lack
        the policy they need.
    """
    seen: typing.Dict[Policy, str] = {}
    policies: typing.List[Policy] = []
    fields: typing.Dict[Policy, str] = {}

    def worded(policy: Policy) -> str:
        return written.get(policy) or str(policy)

    for field, policy in fielded:
        if policy in seen:
            # LLMN may restate a policy the caller also listed: keep one.
            if field.endswith('llmn') or seen[policy].endswith('llmn'):
                continue
            raise PolicyError(field, worded(policy),
                              f'duplicates {seen[policy]}')
        for other, ofield in seen.items():
            _check_pair(policy, field, other, ofield, worded)
        seen[policy] = field
        policies.append(policy)
        fields[policy] = field
    _check_rules(policies, rules, prefix)
    return PolicyDocument(tuple(policies), rules, name, fields,
                          {p: written[p] for p in policies if p in written})


def _check_pair(a: Policy, afield: str, b: Policy, bfield: str,
                worded: typing.Callable[[Policy], str] = str) -> None:
    if a.scope != b.scope:
        return
    problem = None
    if a.identifier == b.identifier and a.type.attracts != b.type.attracts:
        problem = 'ask for affinity and anti-affinity in the same place'
    elif (a.type is PolicyType.AFFINITY and b.type is PolicyType.AFFINITY
          and a.identifier and b.identifier):
        problem = 'target two different domains of one scope'
    if problem:
        raise PolicyError(_common_prefix(afield, bfield),
                          [worded(b), worded(a)],
                          f'{bfield} and {afield} contradict each other: '
                          f'they {problem}')


def _common_prefix(afield: str, bfield: str) -> str:
    head = afield.rsplit('.', 1)[0] if '.' in afield else ''
    return _join(head, 'policies') if head else 'policies'


def _check_rules(policies: typing.Sequence[Policy], rules: Rules,
                 prefix: str) -> None:
    untargeted = {(p.type, p.scope) for p in policies if not p.identifier}
    for scope, limit in rules.max_server_per.items():
        if (PolicyType.ANTI_AFFINITY, scope) not in untargeted:
            raise PolicyError(
                _join(prefix, f'rules.{MAX_SERVER_PER}{scope}'), limit,
                f'needs the policy anti-affinity:{scope}')
    for scope, n in rules.min_domains.items():
        field = _join(prefix, f'rules.{MIN_DOMAINS}{scope}')
        if rules.size is None:
            raise PolicyError(field, n, 'needs rules.size, the number of '
                              'members the group is meant to have')
        if n > rules.size:
            raise PolicyError(field, n, f'cannot spread {rules.size} '
                              f'member(s) over {n} domains')
        if n > 1 and any(p.type is PolicyType.AFFINITY and p.scope == scope
                         for p in policies):
            raise PolicyError(field, n, f'contradicts affinity:{scope}, '
                              'which keeps every member in one domain')


def from_nova_group(policy: typing.Optional[str],
                    rules: typing.Optional[typing.Mapping] = None,
                    name: typing.Optional[str] = None) -> PolicyDocument:
    """The document equivalent to a plain Nova server group.

    ``anti-affinity`` with ``{"max_server_per_host": N}`` becomes
    ``["anti-affinity:host"]`` with the same rule; Nova validated the group
    already, so this only fails on data Nova itself would refuse.

    :param policy: Nova's policy name, or None for a group without one.
    :param rules: Nova's group rules (values may be strings).
    :param name: the group name.
    """
    if not policy:
        return PolicyDocument(name=name)
    data: dict = {'policy': policy}
    if rules:
        data['rules'] = dict(rules)
    doc = parse_document(data, prefix='server_group')
    return PolicyDocument(doc.policies, doc.rules, name, doc.fields,
                          doc.written)


def merge(first: PolicyDocument, second: PolicyDocument,
          prefix: str = '') -> PolicyDocument:
    """Combine two documents that apply to one group at once.

    Used for a Nova group's own policy plus the ``scoped_policies`` hint.
    Policies are united (identical ones kept once), rules must not disagree,
    and the union is validated as a whole. Either document may hold real
    identifiers: how the caller wrote each policy (``written``) is carried
    into the result and names it in errors, so a tenant never sees the
    real id of a domain it knows by another identifier.

    :param first: the document that comes first (Nova's group).
    :param second: the document added to it.
    :param prefix: names the second document's fields in errors.
    """
    max_per = dict(first.rules.max_server_per)
    min_dom = dict(first.rules.min_domains)
    for table, key, extra in ((max_per, MAX_SERVER_PER,
                               second.rules.max_server_per),
                              (min_dom, MIN_DOMAINS,
                               second.rules.min_domains)):
        for scope, value in extra.items():
            if table.get(scope, value) != value:
                raise PolicyError(_join(prefix, f'rules.{key}{scope}'),
                                  value, f'disagrees with the group\'s own '
                                  f'rule ({table[scope]})')
            table[scope] = value
    size = first.rules.size
    if second.rules.size is not None:
        if size not in (None, second.rules.size):
            raise PolicyError(_join(prefix, 'rules.size'), second.rules.size,
                              f'disagrees with the group\'s own size {size}')
        size = second.rules.size
    fielded = [(first.field_of(i), p) for i, p in enumerate(first.policies)]
    fielded += [(second.field_of(i), p)
                for i, p in enumerate(second.policies)
                if p not in first.policies]
    written = dict(second.written)
    written.update(first.written)
    return build_document(fielded, Rules(max_per, min_dom, size),
                          first.name or second.name, prefix, written)
