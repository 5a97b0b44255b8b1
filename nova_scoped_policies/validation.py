"""jsonschema errors in the words our users read.

The documents we parse (simulation scenarios, stack documents, API bodies)
are checked against JSON schemas. :func:`describe` turns one
``jsonschema.ValidationError`` into a key path (``requests[2].boot.count``)
and a short problem; a schema words a problem itself with ``x-problem``
(one message, or a mapping of keyword to message). Values are echoed
bounded, never whole.
"""

import typing

import jsonschema

from nova_scoped_policies.policy import errors

SHORT = 120
"""Longest message taken from jsonschema as it is."""


def path(parts: typing.Iterable[typing.Union[str, int]],
         root: str = '') -> str:
    """``['requests', 2, 'boot']`` -> ``requests[2].boot`` (``root`` for
    the document itself)."""
    out = ''
    for part in parts:
        out += f'[{part}]' if isinstance(part, int) else (
            f'.{part}' if out else str(part))
    return out or root


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
        name = extra[0][:64] if extra else '?'
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
