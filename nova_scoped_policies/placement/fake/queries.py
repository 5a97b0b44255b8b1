"""Query string parameters: which a microversion knows, and parsing
``resources``, ``required`` (traits), ``member_of`` and ``limit`` with
Placement's error texts."""

import re
import typing
import uuid as uuidlib

import os_resource_classes

from nova_scoped_policies.placement import model
from nova_scoped_policies.placement.fake import errors

CUSTOM_RE = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
"""A custom resource class or trait."""
NAME_RE = re.compile(r'^[A-Z0-9_]+$')
"""A resource class or trait, standard or custom."""
STANDARD_RCS = frozenset(os_resource_classes.STANDARDS)

Known = typing.Mapping[str, typing.Tuple[int, int]]


def check_params(params, known: Known, version) -> None:
    """400 for a parameter the version does not know.

    :param params: the query string.
    :param known: parameter -> the first microversion that knows it.
    :param version: the request's microversion.
    """
    for key in params:
        if key not in known or version < known[key]:
            raise errors.query_error('Additional properties are not '
                                     f"allowed ('{key}' was unexpected)")


def is_uuid(value) -> bool:
    try:
        uuidlib.UUID(str(value))
    except ValueError:
        return False
    return True


def parse_limit(values) -> typing.Optional[int]:
    """The last ``limit`` (None: none)."""
    if not values:
        return None
    raw = values[-1]
    if not raw.isdigit() or int(raw) < 1:
        raise errors.query_error("Failed validating 'pattern' in "
                                 "schema['properties']['limit']")
    return int(raw)


def parse_resources(text: str) -> typing.Dict[str, int]:
    """``resources=VCPU:2,MEMORY_MB:1024`` -> {class: amount}; custom
    classes are taken as existing (``/resource_classes`` is not served).
    """
    resources: typing.Dict[str, int] = {}
    for part in text.split(',') if text else ['']:
        rc, colon, amount = part.partition(':')
        if not colon or not rc:
            raise errors.APIError(
                400, 'Badly formed resources parameter. Expected '
                'resources query string parameter in form: '
                '?resources=VCPU:2,MEMORY_MB:1024. Got: '
                f'{part or ("empty string" if not text else "")}.',
                'placement.query.bad_value')
        if rc in resources:
            raise errors.APIError(
                400, 'Badly formed resources parameter: resource '
                f'class {rc} appears more than once',
                'placement.query.duplicate_key')
        try:
            resources[rc] = int(amount)
        except ValueError:
            raise errors.query_error(f'Requested resource {rc} expected '
                                     f'positive integer amount. Got: '
                                     f'{amount}.')
        if resources[rc] < 1:
            raise errors.query_error(f'Requested resource {rc} requires '
                                     f'amount >= 1. Got: {amount}.')
        if rc not in STANDARD_RCS and not CUSTOM_RE.match(rc):
            raise errors.APIError(400, 'Invalid resource class in resources '
                                  f'parameter: No such resource class {rc}.')
    return resources


def parse_member_of(values, version):
    """-> (list of any-of sets that must each match, forbidden set)."""
    if len(values) > 1 and version < (1, 24):
        raise errors.query_error('Multiple member_of parameters are not '
                                 'supported before microversion 1.24.')
    member_in: typing.List[typing.Set[str]] = []
    member_out: typing.Set[str] = set()
    for value in values:
        negate = value.startswith('!')
        if negate:
            if version < (1, 32):
                raise errors.query_error('Forbidden member_of parameters are '
                                         'not supported in the specified '
                                         'microversion')
            value = value[1:]
        listed = value.startswith('in:')
        uuids = (value[3:] if listed else value).split(',')
        if not listed and len(uuids) > 1:
            raise errors.query_error(
                "Multiple values for 'member_of' must be prefixed with the "
                "'in:' or '!in:' keyword using the valid microversion.")
        if not all(is_uuid(u) for u in uuids):
            raise errors.query_error("Expected 'member_of' parameter to "
                                     f'contain valid UUID(s). Got: {value}')
        if negate:
            member_out.update(uuids)
        else:
            member_in.append(set(uuids))
    return member_in, member_out


def required_values(params, version) -> typing.List[str]:
    """The ``required`` values that count: before 1.39 the last one."""
    values = params.getall('required')
    if version < (1, 39):
        values = values[-1:]
    return values


def parse_traits(placement: model.Placement, values, version,
                 any_of: bool = True):
    """``required`` values -> (required, forbidden, any-of sets).

    :param placement: the model, which knows the traits.
    :param values: the parameter's values.
    :param version: the request's microversion.
    :param any_of: whether ``in:`` is allowed (from 1.39).
    """
    required, forbidden = set(), set()
    groups: typing.List[typing.FrozenSet[str]] = []
    form = ('HW_CPU_X86_VMX,!CUSTOM_MAGIC' if version >= (1, 22)
            else 'HW_CPU_X86_VMX,CUSTOM_MAGIC')
    for value in values:
        if value.startswith('in:') and version < (1, 39):
            raise errors.query_error("The format 'in:HW_CPU_X86_VMX,"
                                     "CUSTOM_MAGIC' only supported since "
                                     'microversion 1.39.')
        if any_of and value.startswith('in:'):
            names = value[3:].split(',')
            _known_traits(placement, names, value, form)
            groups.append(frozenset(names))
            continue
        for name in value.split(','):
            target = required
            if name.startswith('!') and version >= (1, 22):
                name, target = name[1:], forbidden
            _known_traits(placement, [name], value, form)
            target.add(name)
    both = ', '.join(sorted(required & forbidden))
    if both:
        raise errors.query_error('Conflicting required and forbidden '
                                 f'traits found: {both}')
    return required, forbidden, tuple(groups)


def _known_traits(placement: model.Placement, names, value: str,
                  form: str) -> None:
    if not all(names) or any(not NAME_RE.match(n) for n in names):
        raise errors.query_error("Expected 'required' parameter value of "
                                 f'the form: {form}. Got: {value}')
    unknown = [n for n in names if not placement.known_trait(n)]
    if unknown:
        raise errors.APIError(400, 'No such trait(s): '
                              f'{", ".join(unknown)}.')
