"""jsonschema errors in the words our users read.

The documents we parse (simulation scenarios, stack documents, API bodies)
are checked against JSON schemas. :func:`describe` turns one
``jsonschema.ValidationError`` into a key path (``requests[2].boot.count``)
and a short problem; a schema words a problem itself with ``x-problem``
(one message, or a mapping of keyword to message). Values are echoed
bounded, never whole.
"""

import re
import typing

import jsonschema
from oslo_config import cfg
from oslo_config import types

from nova_scoped_policies.policy import errors

SHORT = 120
"""Longest message taken from jsonschema as it is."""
LONGEST = 400
"""Longest error message :func:`one_line` lets through."""
_WORD = re.compile(r'\A[\w:\-/]{1,64}\Z')


def key(part: object) -> str:
    """A mapping key as a path shows it: as it is when it is a short word
    (``VCPU``, ``trait:CUSTOM_X``, ``hw:cpu_policy``), else its repr,
    bounded (a key of white space, dots or control characters)."""
    text = str(part)
    return text if isinstance(part, str) and _WORD.match(text) \
        else errors.shown(part)


def path(parts: typing.Iterable[typing.Union[str, int]],
         root: str = '') -> str:
    """``['requests', 2, 'boot']`` -> ``requests[2].boot`` (``root`` for
    the document itself)."""
    out = ''
    for part in parts:
        out += f'[{part}]' if isinstance(part, int) else (
            f'.{key(part)}' if out else key(part))
    return out or root


def one_line(text: str, most: int = LONGEST) -> str:
    """``text`` on one line of at most ``most`` characters: line breaks
    and other control characters escaped, the end cut (an error message
    quotes what it was given)."""
    text = ''.join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= most else text[:most - 3] + '...'


def join(field: str, key: str, root: str = '') -> str:
    """The path of ``key`` under ``field``."""
    return f'{field}.{key}' if field and field != root else key


def _echo(value: object) -> str:
    """The prefix echoing a scalar value (bounded, as
    :func:`policy.errors.shown` echoes it); none for a container."""
    if isinstance(value, (dict, list)):
        return ''
    return errors.shown(value) + ': '


_EXPECTED = {
    'minimum': 'must be at least {}',
    'maximum': 'must be at most {}',
    'pattern': 'must match {}',
    'maxLength': 'is too long (at most {} characters)',
    'maxItems': 'has more than {} items',
    'minItems': 'needs at least {} item',
    'maxProperties': 'has more than {} keys',
}
_FIXED = {'minLength': 'must not be empty',
          'minProperties': 'must not be empty',
          'uniqueItems': 'has duplicates'}


def describe(error: jsonschema.ValidationError, root: str = ''
             ) -> typing.Tuple[str, str]:
    """(key path, problem) for one error of a document.

    :param root: how the document itself is named (``body``...).
    """
    field = path(error.absolute_path, root)
    validator = error.validator
    custom = error.schema.get('x-problem') if isinstance(
        error.schema, dict) else None
    if isinstance(custom, dict):
        custom = custom.get(validator)
    if validator == 'additionalProperties':
        known = sorted(error.schema.get('properties', {}))
        extra = sorted(str(k) for k in set(error.instance) - set(known))
        name = key(extra[0]) if extra else '?'
        return join(field, name, root), custom or 'unknown key'
    if validator == 'required':
        missing = error.message.split("'")[1] if "'" in error.message \
            else '?'
        return join(field, missing, root), 'is required'
    if custom:
        return field, _echo(error.instance) + custom
    if validator == 'type':
        return field, f'must be of type {error.validator_value}'
    if validator in _EXPECTED:
        return field, _EXPECTED[validator].format(error.validator_value)
    return field, _FIXED.get(validator, error.message[:SHORT])


def first_error(validator: jsonschema.protocols.Validator, data: object,
                ) -> typing.Optional[jsonschema.ValidationError]:
    """The shallowest error of ``data``, or None when it is valid."""
    errors = sorted(validator.iter_errors(data),
                    key=lambda e: (len(e.absolute_path), e.validator))
    return errors[0] if errors else None


def option_schema(opt: cfg.Opt) -> dict:
    """The JSON schema of an oslo.config option's value, from the type
    oslo.config gives it: the value as YAML or JSON writes it (a boolean,
    a number in the type's range, one of a string's choices, a list of
    the items' type), or a string as a configuration file writes it,
    which the option's type parses (:func:`option_value`). ``null``
    where the option's default is None (unset).

    :param opt: the registered option.
    """
    found = _type_schema(opt.type)
    if isinstance(opt, cfg.MultiOpt) and not isinstance(
            opt.type, (types.List, types.Dict)):
        # MultiStrOpt: a list of the type's values, or one of them
        found = {'type': ['array', 'string'], 'items': found,
                 'x-problem': {'type': 'must be a list of strings'}}
    if opt.default is None:
        found = dict(found, type=_listed(found['type']) + ['null'])
    return found


def _listed(value) -> list:
    return list(value) if isinstance(value, list) else [value]


def _type_schema(kind: types.ConfigType) -> dict:
    if isinstance(kind, types.Boolean):
        return {'type': ['boolean', 'string'],
                'x-problem': {'type': 'must be true or false'}}
    if isinstance(kind, (types.Integer, types.Float)):
        found = {'type': ['integer' if isinstance(kind, types.Integer)
                          else 'number', 'string'],
                 'x-problem': {'type': 'must be a number' if isinstance(
                     kind, types.Float) else 'must be an integer'}}
        if kind.min is not None:
            found['minimum'] = kind.min
        if kind.max is not None:
            found['maximum'] = kind.max
        return found
    if isinstance(kind, types.List):
        item = _type_schema(kind.item_type or types.String())
        return {'type': ['array', 'string'], 'items': item,
                'x-problem': {'type': 'must be a list'}}
    found = {'type': 'string', 'maxLength': 4096,
             'x-problem': {'type': 'must be a string'}}
    if isinstance(kind, types.String):
        if kind.choices:
            found['enum'] = [c for c in kind.choices if c is not None]
            found['x-problem'] = {'type': 'must be a string', 'enum': (
                'must be one of ' + ', '.join(map(str, found['enum'])))}
        if kind.max_length:
            found['maxLength'] = kind.max_length
    return found


def option_value(opt: cfg.Opt, value: object) -> object:
    """``value`` (valid for :func:`option_schema`) as the option's type
    makes it (``'yes'`` -> True, ``'a,b'`` -> ``['a', 'b']``...); None
    stays None (unset).

    :raises ValueError: the type refuses it (a boolean of ``'maybe'``, a
        number out of range in a string...).
    """
    if value is None:
        return None
    try:
        if isinstance(opt, cfg.MultiOpt) and not isinstance(
                opt.type, (types.List, types.Dict)):
            return [opt.type(v) for v in _listed(value)]
        return opt.type(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(one_line(str(exc), SHORT)) from None
