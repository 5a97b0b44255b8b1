"""JSON schemas of request bodies (Placement's API reference) and
validating a request's body or query against them.

A schema is built per request where it depends on the microversion or
is changed by its handler; the others are constants.
"""

import typing

import fastjsonschema
import jsonschema
import orjson
import webob

from oslo_serialization import jsonutils

from nova_scoped_policies.placement.fake import errors
from nova_scoped_policies.placement.fake import queries

_MAX_INT = 2147483647

UUID = {'type': 'string', 'format': 'uuid'}
RC_NAME = {'type': 'string', 'pattern': '^[A-Z0-9_]+$', 'maxLength': 255}
GENERATION = {'type': 'integer'}
_IDENTITY = {'type': 'string', 'minLength': 1, 'maxLength': 255}
INVENTORY_FIELDS = {
    'total': {'type': 'integer', 'minimum': 1, 'maximum': _MAX_INT},
    'reserved': {'type': 'integer', 'minimum': 0, 'maximum': _MAX_INT},
    'min_unit': {'type': 'integer', 'minimum': 1, 'maximum': _MAX_INT},
    'max_unit': {'type': 'integer', 'minimum': 1, 'maximum': _MAX_INT},
    'step_size': {'type': 'integer', 'minimum': 1, 'maximum': _MAX_INT},
    'allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0,
                         'maximum': 3.40282e+38},
}
INVENTORY = {'type': 'object', 'properties': INVENTORY_FIELDS,
             'required': ['total'], 'additionalProperties': False}


def obj(properties: dict, required: typing.Sequence[str] = (),
        **extra) -> dict:
    """An object schema without additional properties."""
    return dict({'type': 'object', 'properties': properties,
                 'required': list(required), 'additionalProperties': False},
                **extra)


# -- resource providers ------------------------------------------------------

def provider(version) -> dict:
    """``POST /resource_providers``."""
    return obj({'name': {'type': 'string', 'minLength': 1,
                         'maxLength': 200},
                'uuid': UUID,
                **({'parent_provider_uuid': {'anyOf': [UUID,
                                                       {'type': 'null'}]}}
                   if version >= (1, 14) else {})}, ['name'])


def provider_update(version) -> dict:
    """``PUT /resource_providers/{uuid}``: a provider without its uuid."""
    schema = provider(version)
    schema['properties'].pop('uuid')
    return schema


# -- inventories -------------------------------------------------------------

INVENTORIES = obj({
    'resource_provider_generation': GENERATION,
    'inventories': {'type': 'object', 'patternProperties': {
        '^[A-Z0-9_]+$': INVENTORY},
        'additionalProperties': False}},
    ['resource_provider_generation', 'inventories'])
"""``PUT /resource_providers/{uuid}/inventories``."""

NEW_INVENTORY = obj(
    dict(INVENTORY_FIELDS, resource_class=RC_NAME,
         resource_provider_generation=GENERATION),
    ['total', 'resource_class'])
"""``POST /resource_providers/{uuid}/inventories``."""

INVENTORY_UPDATE = obj(
    dict(INVENTORY_FIELDS, resource_provider_generation=GENERATION),
    ['total', 'resource_provider_generation'])
"""``PUT /resource_providers/{uuid}/inventories/{rc}``."""


# -- aggregates and traits ---------------------------------------------------

_AGGREGATE_LIST = {'type': 'array', 'uniqueItems': True, 'items': UUID}


def aggregates(version) -> dict:
    """``PUT /resource_providers/{uuid}/aggregates``: a list, from 1.19
    an object with the provider's generation."""
    if version >= (1, 19):
        return obj({'aggregates': _AGGREGATE_LIST,
                    'resource_provider_generation': GENERATION},
                   ['aggregates', 'resource_provider_generation'])
    return _AGGREGATE_LIST


TRAITS = obj(
    {'traits': {'type': 'array', 'uniqueItems': True, 'items': {
        'type': 'string', 'pattern': '^[A-Z0-9_]+$', 'maxLength': 255}},
     'resource_provider_generation': GENERATION},
    ['traits', 'resource_provider_generation'])
"""``PUT /resource_providers/{uuid}/traits``."""


# -- allocations and usages --------------------------------------------------

def _resources() -> dict:
    return {'type': 'object', 'minProperties': 1,
            'patternProperties': {'^[A-Z0-9_]+$': {
                'type': 'integer', 'minimum': 1}},
            'additionalProperties': False}


def _dict_allocations(min_properties: int) -> dict:
    return {'type': 'object', 'minProperties': min_properties,
            'patternProperties': {'^[0-9a-fA-F-]{32,36}$': obj(
                {'resources': _resources(),
                 'generation': GENERATION}, ['resources'])},
            'additionalProperties': False}


def consumer(version, post: bool = False) -> dict:
    """A consumer's allocations in ``PUT /allocations/{c}`` or one entry
    of ``POST /allocations``."""
    if version < (1, 12):
        allocations = {'type': 'array', 'minItems': 1, 'items': obj({
            'resource_provider': obj({'uuid': UUID}, ['uuid']),
            'resources': _resources()},
            ['resource_provider', 'resources'])}
        properties = {'allocations': allocations}
        required = ['allocations']
        if version >= (1, 8):
            properties.update(project_id=_IDENTITY, user_id=_IDENTITY)
            required += ['project_id', 'user_id']
        return obj(properties, required)
    empty_ok = post or version >= (1, 28)
    properties = {'allocations': _dict_allocations(0 if empty_ok else 1),
                  'project_id': _IDENTITY, 'user_id': _IDENTITY}
    required = ['allocations', 'project_id', 'user_id']
    if version >= (1, 28):
        properties['consumer_generation'] = {
            'type': ['integer', 'null'], 'minimum': 0}
        required.append('consumer_generation')
    if version >= (1, 38):
        properties['consumer_type'] = {
            'type': 'string', 'pattern': '^[A-Z0-9_]+$', 'maxLength': 255}
        required.append('consumer_type')
    if version >= (1, 14) and not post:
        properties['mappings'] = {'type': 'object'}
    return obj(properties, required)


def post_allocations(version) -> dict:
    """``POST /allocations``: consumers' allocations by consumer."""
    return {'type': 'object', 'minProperties': 1,
            'patternProperties': {'^[0-9a-fA-F-]{32,36}$':
                                  consumer(version, post=True)},
            'additionalProperties': False}


USAGES_QUERY = obj({'project_id': _IDENTITY, 'user_id': _IDENTITY,
                    'consumer_type': {'type': 'string'}}, ['project_id'])
"""The query string of ``GET /usages``."""


# -- validation --------------------------------------------------------------

_FORMATS = jsonschema.FormatChecker(())
_CHECKS: typing.Dict[bytes, typing.Tuple[typing.Callable, typing.Any]] = {}
"""A schema (as sorted JSON) -> its validators (:func:`_checks`)."""


@_FORMATS.checks('uuid')
def _uuid_format(value) -> bool:
    return not isinstance(value, str) or queries.is_uuid(value)


def validate(body, schema: dict) -> None:
    """Check a request body against a schema.

    :param body: the decoded JSON.
    :param schema: a JSON schema.
    :raises APIError: 400 with jsonschema's explanation.
    """
    key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    checks = _CHECKS.get(key)
    if checks is None:
        checks = _CHECKS[key] = _checks(schema)
    fast, validator = checks
    try:
        fast(body)
        return
    except fastjsonschema.JsonSchemaException:
        pass
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is not None:
        raise errors.APIError(400, f'JSON does not validate: {error}')


def _checks(schema: dict):
    """A schema's two validators, made once (``jsonschema.validate``
    checks the schema and makes its validator on every call: 10 ms of
    each ``PUT`` and ``POST /allocations``, most of a move's time in a
    resilience sweep): fastjsonschema's, compiled to Python, which passes
    a valid body in microseconds, and jsonschema's, which has the last
    word on a body the first refuses and words the error as Placement
    does."""
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return (fastjsonschema.compile(schema, formats={'uuid': _uuid_format}),
            cls(schema, format_checker=_FORMATS))


def load(req: webob.Request, schema: typing.Optional[dict] = None):
    """A request's JSON body (none: None), validated.

    :param req: the request.
    :param schema: a JSON schema (None: any JSON).
    :raises APIError: 400 for JSON that does not parse or validate.
    """
    try:
        body = jsonutils.loads(req.body or b'null')
    except ValueError as exc:
        raise errors.APIError(400, f'Malformed JSON: {exc}')
    if schema is not None:
        validate(body, schema)
    return body


def check_query(params, schema: dict) -> None:
    """Check a query string against a schema (no formats checked).

    :param params: the query string as a multidict.
    :param schema: a JSON schema of its ``dict()``.
    :raises APIError: 400 with jsonschema's explanation.
    """
    try:
        jsonschema.validate(dict(params), schema)
    except jsonschema.ValidationError as exc:
        raise errors.query_error(str(exc))
