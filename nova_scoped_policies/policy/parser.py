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
Which words, rules and contradictions exist is the policy plugins' to say
(``engine/plugins/registry.py``, handed over through
:mod:`nova_scoped_policies.policy.vocabulary`): this module only loops
over them.
"""

import math
import typing

from nova_scoped_policies.policy import vocabulary as _vocabulary
from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.errors import shown
from nova_scoped_policies.policy.model import MAX_SERVER_PER
from nova_scoped_policies.policy.model import MIN_DOMAINS
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules
from nova_scoped_policies.policy.model import SIZE
from nova_scoped_policies.policy.model import WEIGHT
from nova_scoped_policies.policy.names import bounded_int
from nova_scoped_policies.policy.names import MAX_INT  # noqa: F401
from nova_scoped_policies.policy.names import SCOPE_PATTERN  # noqa: F401
from nova_scoped_policies.policy.names import validate_scope_name

_NAME_MAX = 255

_DOCUMENT_KEYS = ('name', 'policies', 'rules', 'llmn', 'policy')
_LLMN_KEYS = ('level1', 'level2', 'n')


def vocabulary() -> typing.Mapping[str, PolicyType]:
    """word -> policy type: the types the registered plugins own, in the
    registry's order."""
    return _vocabulary.current().vocabulary()


def _join(prefix: str, field: str) -> str:
    return f'{prefix}.{field}' if prefix else field


def _positive_int(field: str, value: object) -> int:
    return bounded_int(field, value)


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
    plugin = _vocabulary.current().by_word().get(parts[0])
    if plugin is None:
        # the value is echoed already: repeat a short word only
        word = f' {shown(parts[0])}' if len(parts[0]) <= 32 else ''
        raise PolicyError(field, text, f'unknown policy type{word}; '
                          f'expected one of {", ".join(vocabulary())}')
    return plugin.parse(parts, text, field)


def _parse_rules(data: object, field: str) -> typing.Dict[str, typing.Any]:
    """``rules`` as :class:`Rules`' keyword arguments: every key one of
    a plugin's rules (the vocabulary's ``rules``) or ``size``."""
    if not isinstance(data, dict):
        raise PolicyError(field, data, 'rules must be an object')
    by_scope: typing.Dict[str, typing.Dict[str, int]] = {}
    weights: typing.Dict[str, int] = {}
    size = None
    known = _vocabulary.current().rules()
    for key, value in data.items():
        kfield = f'{field}.{key}'
        if key == SIZE:
            size = _positive_int(kfield, value)
            continue
        rule = next((r for r in known if isinstance(key, str)
                     and key.startswith(r.prefix)), None)
        if rule is None:
            shapes = [r.prefix + ('<policy>' if r.by_policy else '<scope>')
                      for r in known]
            raise PolicyError(kfield, value, 'unknown rule; expected '
                              + ', '.join(shapes) + ' or size')
        suffix = key[len(rule.prefix):]
        number = bounded_int(kfield, value, rule.low, rule.high)
        if rule.by_policy:
            weights[str(parse_policy(suffix, kfield))] = number
        else:
            by_scope.setdefault(rule.prefix, {})[
                validate_scope_name(kfield, suffix)] = number
    return {'by_scope': by_scope, 'weights': weights, 'size': size}


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
    table = rules['by_scope']
    if size is None:
        raise PolicyError(_join(prefix, 'rules.size'), None,
                          'llmn needs the group size M in rules.size')
    if n > size:
        raise PolicyError(f'{field}.n', n, f'cannot spread {size} '
                          f'member(s) over at least {n} {level1} domains')
    for scope, key in ((level1, MAX_SERVER_PER), (level1, MIN_DOMAINS),
                       (level2, MAX_SERVER_PER)):
        if scope in table.get(key, {}):
            raise PolicyError(_join(prefix, f'rules.{key}{scope}'),
                              table[key][scope],
                              'is set by llmn; do not set it as well')
    table.setdefault(MAX_SERVER_PER, {})[level1] = math.ceil(size / n)
    table.setdefault(MIN_DOMAINS, {})[level1] = n
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


def parse_document(data: object, prefix: str = '',
                   stack: bool = False) -> PolicyDocument:
    """Validate a policy document and return its normalised form.

    :param data: the decoded JSON/YAML document.
    :param prefix: prepended to every field name in errors, e.g. the
        scheduler hint name.
    :param stack: the document is a stack's (a group's or a
        relationship's of a stack document): policies that only a stack
        can hold (``bandwidth``) are accepted.
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
    return build_document(fielded, Rules(**rules), name, prefix,
                          stack=stack)


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
    labels = [str(p) for p in document.policies]
    for key, value in document.rules.to_dict().items():
        rule = next((r for r in _vocabulary.current().rules()
                     if key.startswith(r.prefix)), None)
        about = key[len(rule.prefix):] if rule else None
        index = (labels.index(about) if rule and rule.by_policy
                 and about in labels else
                 scopes.index(about) if about in scopes else 0)
        found[index]['rules'][key] = value
    return found[0] if len(found) == 1 else found


def build_document(fielded: typing.Sequence[typing.Tuple[str, Policy]],
                   rules: Rules, name: typing.Optional[str] = None,
                   prefix: str = '',
                   written: typing.Mapping[Policy, str] = {},
                   stack: bool = False) -> PolicyDocument:
    """Check policies and rules together and build the document.

    :param fielded: (field name, policy) pairs, in order.
    :param rules: the parsed rules.
    :param name: the document name.
    :param prefix: prepended to rule field names in errors.
    :param written: policy -> how the caller wrote it, when its identifier
        is the real one (see ``PolicyDocument.written``): errors name it
        that way, and the document keeps it.
    :param stack: the document is a stack's: policies whose plugin is
        ``stack_only`` are accepted (elsewhere they are refused, saying
        they belong in a stack).
    :raises PolicyError: on duplicates, contradictions, rules that lack
        the policy they need, or a stack's policy on a server group.
    """
    seen: typing.Dict[Policy, str] = {}
    policies: typing.List[Policy] = []
    fields: typing.Dict[Policy, str] = {}

    def worded(policy: Policy) -> str:
        return written.get(policy) or str(policy)

    plugin_of = _vocabulary.current().plugin_of
    for field, policy in fielded:
        if not stack and getattr(plugin_of(policy.type), 'stack_only',
                                 False):
            raise PolicyError(field, worded(policy), f'{policy.type} '
                              'belongs in a stack: give it on a group or '
                              'a relationship of a stack document, not on '
                              'a server group')
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
    plugin_of = _vocabulary.current().plugin_of
    problem = (plugin_of(a.type).conflict(a, b)
               or plugin_of(b.type).conflict(b, a))
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
    """Each rule beside what it needs (``Rule.check``)."""
    for rule in _vocabulary.current().rules():
        values = (rules.weights if rule.by_policy
                  else rules.per_scope(rule.prefix))
        for about, value in values.items():
            problem = rule.check(about, value, policies, rules)
            if problem:
                raise PolicyError(
                    _join(prefix, f'rules.{rule.prefix}{about}'), value,
                    problem)


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
    by_scope = {key: dict(values)
                for key, values in first.rules.by_scope.items()}
    weights = dict(first.rules.weights)
    tables = [(by_scope.setdefault(key, {}), key, values)
              for key, values in second.rules.by_scope.items()]
    tables.append((weights, WEIGHT, second.rules.weights))
    for table, key, extra in tables:
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
    return build_document(fielded, Rules(by_scope, weights, size),
                          first.name or second.name, prefix, written)
