"""An in-memory Placement's REST API: the subset nova-scoped-policies uses.

A WSGI app (webob) for simulations and tests that need no database:
resource providers with generations (create, list, show, rename, delete),
inventories, usages, aggregates, traits, ``GET /allocation_candidates``
(resources, required, forbidden and any-of traits, ``member_of`` plain,
``in:``, ``!in:`` and repeated, ``root_required``, ``limit``),
allocations (list and dict forms, ``POST /allocations``) and
``GET /usages``. Microversions 1.0 to 1.39 are checked as Placement
checks them (400 for a malformed header, 406 for an unsupported version,
400 or 404 for a parameter or route the version does not know), bodies
are validated with JSON schemas of Placement's API reference, and the
status codes are Placement's: ``tests/functional/test_placement_gabbits.py``
runs Placement's own gabbi files for this subset against this app, and
``tests/functional/test_placement_conformance.py`` runs the same cases
against it and the real Placement.

Not served (:data:`NOT_SERVED`, answered 501 with a body naming what is
not served): nested and sharing providers (``parent_provider_uuid``,
``in_tree``, granular request groups), ``/resource_classes`` (custom
resource classes are accepted without being created), ``/reshaper``,
keystone tokens and policies (every caller is an admin), CORS.

This module parses requests, checks microversions and renders answers;
the state and its rules are :mod:`.model`'s (``FakePlacement.model``),
whose errors map to 404, 409 and 400 here, once.
"""

import copy
import re
import time
import typing
import uuid as uuidlib
from wsgiref import handlers as wsgi_handlers

import jsonschema
import microversion_parse
import os_resource_classes
import webob
import webob.dec
import webob.exc

from oslo_serialization import jsonutils

from nova_scoped_policies.placement import model

MIN_VERSION = (1, 0)
MAX_VERSION = (1, 39)
_HEADER = 'OpenStack-API-Version'
_CUSTOM_RE = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_RC_RE = re.compile(r'^[A-Z0-9_]+$')
_STANDARD_RCS = frozenset(os_resource_classes.STANDARDS)
_JSON = 'application/json'
_MAX_INT = 2147483647

NOT_SERVED = (
    (r'/resource_classes(/.*)?$',
     'resource classes: custom classes are accepted in inventories and '
     'allocations without being created'),
    (r'/reshaper$', 'the reshaper'),
)
"""Placement's routes the fake does not serve: path regex, what it is.
They answer 501 with a body that says so; so do the parameters of served
routes that the fake does not serve (nested providers, granular request
groups)."""

# error codes (microversion 1.23)
DEFAULT_CODE = 'placement.undefined_code'
INCOMPLETE_CONSUMER = '00000000-0000-0000-0000-000000000000'
"""Project and user of allocations written before microversion 1.8
(Placement's ``incomplete_consumer_*_id`` defaults)."""
NOT_SERVED_CODE = 'nova_scoped_policies.fake_placement.not_served'


class APIError(Exception):
    """What the fake answers instead of a 2xx: status and detail.

    :param status: the HTTP status.
    :param detail: the error text.
    :param code: Placement's error code (1.23).
    :param headers: more response headers (``Allow`` of a 405).
    :param version_error: the request's version header is the problem.
    """

    def __init__(self, status: int, detail: str, code: str = DEFAULT_CODE,
                 headers: typing.Optional[dict] = None,
                 version_error: bool = False) -> None:
        self.status = status
        self.detail = detail
        self.code = code
        self.headers = headers or {}
        self.version_error = version_error
        super().__init__(detail)


def not_served(what: str) -> APIError:
    """The 501 of something Placement serves and this fake does not.

    :param what: the route or parameter.
    """
    return APIError(501, f'{what} is not served by the simulator\'s '
                    'embedded Placement (nova_scoped_policies.placement.'
                    'fake)', NOT_SERVED_CODE)


def parse_version(text: str) -> typing.Tuple[int, int]:
    """"1.36" -> (1, 36)."""
    major, minor = text.split('.')
    return int(major), int(minor)


def _query_error(detail: str) -> APIError:
    return APIError(400, f'Invalid query string parameters: {detail}',
                    'placement.query.bad_value')


# -- JSON schemas of request bodies (Placement's API reference) -------------

_UUID = {'type': 'string', 'format': 'uuid'}
_RC_NAME = {'type': 'string', 'pattern': '^[A-Z0-9_]+$', 'maxLength': 255}
_GENERATION = {'type': 'integer'}
_INVENTORY_FIELDS = {
    'total': {'type': 'integer', 'minimum': 1, 'maximum': _MAX_INT},
    'reserved': {'type': 'integer', 'minimum': 0, 'maximum': _MAX_INT},
    'min_unit': {'type': 'integer', 'minimum': 1, 'maximum': _MAX_INT},
    'max_unit': {'type': 'integer', 'minimum': 1, 'maximum': _MAX_INT},
    'step_size': {'type': 'integer', 'minimum': 1, 'maximum': _MAX_INT},
    'allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0,
                         'maximum': 3.40282e+38},
}
_INVENTORY = {'type': 'object', 'properties': _INVENTORY_FIELDS,
              'required': ['total'], 'additionalProperties': False}


def _obj(properties: dict, required: typing.Sequence[str] = (),
         **extra) -> dict:
    """An object schema without additional properties."""
    return dict({'type': 'object', 'properties': properties,
                 'required': list(required), 'additionalProperties': False},
                **extra)


def _provider_schema(version) -> dict:
    return _obj({'name': {'type': 'string', 'minLength': 1,
                          'maxLength': 200},
                 'uuid': _UUID,
                 **({'parent_provider_uuid': {'anyOf': [_UUID,
                                                        {'type': 'null'}]}}
                    if version >= (1, 14) else {})}, ['name'])


def _resources_schema() -> dict:
    return {'type': 'object', 'minProperties': 1,
            'patternProperties': {'^[A-Z0-9_]+$': {
                'type': 'integer', 'minimum': 1}},
            'additionalProperties': False}


def _dict_allocations_schema(min_properties: int) -> dict:
    return {'type': 'object', 'minProperties': min_properties,
            'patternProperties': {'^[0-9a-fA-F-]{32,36}$': _obj(
                {'resources': _resources_schema(),
                 'generation': _GENERATION}, ['resources'])},
            'additionalProperties': False}


def _consumer_schema(version, post: bool = False) -> dict:
    """A consumer's allocations in ``PUT /allocations/{c}`` or one entry
    of ``POST /allocations``."""
    identity = {'type': 'string', 'minLength': 1, 'maxLength': 255}
    if version < (1, 12):
        allocations = {'type': 'array', 'minItems': 1, 'items': _obj({
            'resource_provider': _obj({'uuid': _UUID}, ['uuid']),
            'resources': _resources_schema()},
            ['resource_provider', 'resources'])}
        properties = {'allocations': allocations}
        required = ['allocations']
        if version >= (1, 8):
            properties.update(project_id=identity, user_id=identity)
            required += ['project_id', 'user_id']
        return _obj(properties, required)
    empty_ok = post or version >= (1, 28)
    properties = {'allocations': _dict_allocations_schema(0 if empty_ok
                                                          else 1),
                  'project_id': identity, 'user_id': identity}
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
    return _obj(properties, required)


def _post_allocations_schema(version) -> dict:
    return {'type': 'object', 'minProperties': 1,
            'patternProperties': {'^[0-9a-fA-F-]{32,36}$':
                                  _consumer_schema(version, post=True)},
            'additionalProperties': False}


_FORMATS = jsonschema.FormatChecker(())


@_FORMATS.checks('uuid')
def _uuid_format(value) -> bool:
    return not isinstance(value, str) or _is_uuid(value)


def validate(body, schema: dict) -> None:
    """Check a request body against a schema.

    :param body: the decoded JSON.
    :param schema: a JSON schema.
    :raises APIError: 400 with jsonschema's explanation.
    """
    try:
        jsonschema.validate(body, schema, format_checker=_FORMATS)
    except jsonschema.ValidationError as exc:
        raise APIError(400, f'JSON does not validate: {exc}')


# -- rendering ---------------------------------------------------------------

def _provider_body(provider: model.Provider, prefix: str, version) -> dict:
    base = f'{prefix}/resource_providers/{provider.uuid}'
    rels = ['inventories', 'usages']
    for rel, since in (('aggregates', (1, 1)), ('traits', (1, 6)),
                       ('allocations', (1, 11))):
        if version >= since:
            rels.append(rel)
    body = {'uuid': provider.uuid, 'name': provider.name,
            'generation': provider.generation,
            'links': [{'rel': 'self', 'href': base}] + [
                {'rel': rel, 'href': f'{base}/{rel}'} for rel in rels]}
    if version >= (1, 14):
        body['parent_provider_uuid'] = None
        body['root_provider_uuid'] = provider.uuid
    return body


def _status_of(err: model.Error) -> typing.Tuple[int, str]:
    """The status and error code of one of the model's errors (the one
    place they become HTTP)."""
    for cls, status, code in (
            (model.GenerationConflict, 409, 'placement.concurrent_update'),
            (model.InUse, 409, 'placement.inventory.inuse'),
            (model.DuplicateName, 409, 'placement.duplicate_name'),
            (model.Conflict, 409, DEFAULT_CODE),
            (model.NotFound, 404, DEFAULT_CODE),
            (model.Invalid, 400, DEFAULT_CODE)):
        if isinstance(err, cls):
            return status, code
    return 500, DEFAULT_CODE


def _accepts_json(req: webob.Request) -> bool:
    return not req.accept or bool(req.accept.acceptable_offers([_JSON]))


class FakePlacement:
    """The WSGI application; its state is ``self.model``.

    :param max_version: the highest microversion to claim, e.g. "1.29" to
        play an old Placement.
    """

    def __init__(self, max_version: str = '%d.%d' % MAX_VERSION) -> None:
        self.max_version = parse_version(max_version)
        # every microversion served, for microversion_parse
        self._served = ['%d.%d' % (MIN_VERSION[0], minor) for minor in
                        range(MIN_VERSION[1], self.max_version[1] + 1)]
        self.model = model.Placement()
        # provider -> aggregates in the order last PUT (Placement lists
        # them so; the model holds a set)
        self._aggregate_order: typing.Dict[str, typing.List[str]] = {}
        rp = r'/resource_providers/(?P<uuid>[^/]+)'
        # path regex, {method: (handler, takes a JSON body)}
        self.routes = [
            (r'/$', {'GET': (self.root, False)}),
            (r'/resource_providers$', {
                'GET': (self.list_providers, False),
                'POST': (self.create_provider, True)}),
            (rp + '$', {'GET': (self.get_provider, False),
                        'PUT': (self.update_provider, True),
                        'DELETE': (self.delete_provider, False)}),
            (rp + '/inventories$', {
                'GET': (self.get_inventories, False),
                'PUT': (self.put_inventories, True),
                'POST': (self.post_inventory, True),
                'DELETE': (self.delete_inventories, False)}),
            (rp + '/inventories/(?P<rc>[^/]+)$', {
                'GET': (self.get_inventory, False),
                'PUT': (self.put_inventory, True),
                'DELETE': (self.delete_inventory, False)}),
            (rp + '/usages$', {'GET': (self.get_usages, False)}),
            (rp + '/aggregates$', {'GET': (self.get_aggregates, False),
                                   'PUT': (self.put_aggregates, True)}),
            (rp + '/traits$', {'GET': (self.get_traits, False),
                               'PUT': (self.put_traits, True),
                               'DELETE': (self.delete_traits, False)}),
            (rp + '/allocations$', {
                'GET': (self.get_provider_allocations, False)}),
            (r'/traits$', {'GET': (self.list_traits, False)}),
            (r'/traits/(?P<name>[^/]+)$', {
                'GET': (self.get_trait, False),
                'PUT': (self.put_trait, False),
                'DELETE': (self.delete_trait, False)}),
            (r'/usages$', {'GET': (self.get_project_usages, False)}),
            (r'/allocation_candidates$', {
                'GET': (self.allocation_candidates, False)}),
            (r'/allocations$', {'POST': (self.post_allocations, True)}),
            (r'/allocations/(?P<consumer>[^/]+)$', {
                'GET': (self.get_allocations, False),
                'PUT': (self.put_allocations, True),
                'DELETE': (self.delete_allocations, False)}),
        ]
        self._compiled = [(re.compile(p), m) for p, m in self.routes]
        self._not_served = [(re.compile(p), what) for p, what in NOT_SERVED]

    # -- WSGI plumbing ---------------------------------------------------

    def __call__(self, environ: dict, start_response):
        """The WSGI entry point; a path that is not PEP 3333's latin-1
        (some test transports put unicode there) is made so first."""
        path = environ.get('PATH_INFO', '')
        try:
            path.encode('latin-1')
        except UnicodeEncodeError:
            environ['PATH_INFO'] = path.encode('utf-8').decode('latin-1')
        return self._app(environ, start_response)

    @webob.dec.wsgify
    def _app(self, req: webob.Request) -> webob.Response:
        version = self.max_version
        try:
            version = self._version(req)
            return self._dispatch(req, version)
        except APIError as err:
            # an unusable version header: no version in the answer
            return self._error(req, err,
                               None if err.version_error else version)

    def _dispatch(self, req: webob.Request, version) -> webob.Response:
        path = req.path_info or '/'
        for pattern, methods in self._compiled:
            match = pattern.match(path)
            if not match:
                continue
            if req.method not in methods:
                allow = ', '.join(sorted(methods))
                raise APIError(405, f'The method {req.method} is not '
                               'allowed for this resource.',
                               headers={'Allow': allow})
            handler, takes_json = methods[req.method]
            self._check_headers(req, takes_json)
            try:
                status, body, *location = handler(req, version,
                                                  **match.groupdict())
            except model.Error as err:
                status, code = _status_of(err)
                raise APIError(status, str(err), code)
            resp = self._respond(status, body, version,
                                 path.startswith('/traits/'))
            if location:
                resp.location = req.host_url + req.script_name + \
                    location[0]
            return resp
        for pattern, what in self._not_served:
            if pattern.match(path):
                raise not_served(f'{req.method} {path} ({what})')
        raise APIError(404, 'The resource could not be found.')

    @staticmethod
    def _check_headers(req: webob.Request, takes_json: bool) -> None:
        """Accept, Content-Type and Content-Length, as Placement checks
        them."""
        if not _accepts_json(req):
            raise APIError(406, 'Only application/json is provided')
        length = req.headers.get('Content-Length')
        if length is not None and not length.strip().isdigit():
            raise APIError(400, 'content-length header must be an integer')
        if not takes_json:
            return
        if not req.content_type and req.content_length:
            raise APIError(400, 'content-type header required when '
                           'content-length > 0')
        if req.content_type != _JSON:
            raise APIError(415, 'The media type '
                           f'{req.content_type or None} is not supported, '
                           'use application/json')

    @staticmethod
    def _respond(status: int, body, version,
                 cache: bool = False) -> webob.Response:
        """A 2xx answer.

        :param status: the HTTP status.
        :param body: the JSON body (None: none).
        :param version: the request's microversion.
        :param cache: whether a bodiless answer has Placement's cache
            headers too (``/traits/{name}``); 200s with a body have them.
        """
        resp = webob.Response(status=status)
        FakePlacement._version_headers(resp, version)
        if body is not None:
            resp.content_type = _JSON
            resp.text = jsonutils.dumps(body)
        else:
            resp.headers.pop('Content-Type', None)
        if version >= (1, 15) and (cache or status == 200):
            resp.headers['Cache-Control'] = 'no-cache'
            resp.headers['Last-Modified'] = \
                wsgi_handlers.format_date_time(time.time())
        return resp

    def _error(self, req, err: APIError, version) -> webob.Response:
        """The error answer; ``version`` None: the request's version
        header could not be used (no version headers, no error code)."""
        resp = webob.Response(status=err.status)
        if version is not None:
            self._version_headers(resp, version)
        resp.headers.update(err.headers)
        title = webob.exc.status_map[err.status].title
        error = {'status': err.status, 'title': title, 'detail': err.detail,
                 'request_id': f'req-{uuidlib.uuid4()}'}
        if version is not None and version >= (1, 23):
            error['code'] = err.code
        if _accepts_json(req):
            resp.content_type = _JSON
            resp.text = jsonutils.dumps({'errors': [error]})
        else:
            resp.content_type = 'text/html'
            resp.text = (f'<html><head><title>{err.status} {title}</title>'
                         f'</head><body><h1>{err.status} {title}</h1>'
                         f'{webob.html_escape(err.detail)}</body></html>')
        return resp

    @staticmethod
    def _version_headers(resp: webob.Response, version) -> None:
        resp.headers[_HEADER] = 'placement %d.%d' % version
        resp.headers['Vary'] = _HEADER.lower()

    def _version(self, req) -> typing.Tuple[int, int]:
        """The request's microversion, read as Placement reads it
        (microversion_parse: only placement's entry of the header counts,
        none is 1.0, ``latest`` the newest served).

        :raises APIError: 400 for a version that does not parse, 406 for
            one not served.
        """
        try:
            found = microversion_parse.extract_version(
                req.headers, 'placement', self._served)
        except TypeError as exc:
            raise APIError(400, str(exc), version_error=True)
        except ValueError as exc:
            raise APIError(406, str(exc), version_error=True)
        return found.major, found.minor

    @staticmethod
    def _body(req, schema: typing.Optional[dict] = None):
        try:
            body = jsonutils.loads(req.body or b'null')
        except ValueError as exc:
            raise APIError(400, f'Malformed JSON: {exc}')
        if schema is not None:
            validate(body, schema)
        return body

    @staticmethod
    def _since(version, since: typing.Tuple[int, int]) -> None:
        """404 for a route the version does not have (as Placement)."""
        if version < since:
            raise APIError(404, 'The resource could not be found.')

    # -- root and providers ----------------------------------------------

    def root(self, req, version):
        return 200, {'versions': [{
            'id': 'v1.0', 'status': 'CURRENT',
            'min_version': '%d.%d' % MIN_VERSION,
            'max_version': '%d.%d' % self.max_version,
            'links': [{'rel': 'self', 'href': ''}]}]}

    def create_provider(self, req, version):
        body = self._body(req, _provider_schema(version))
        if body.get('parent_provider_uuid'):
            raise not_served('parent_provider_uuid (nested providers)')
        provider = self.model.add_provider(
            str(uuidlib.UUID(body.get('uuid') or str(uuidlib.uuid4()))),
            body['name'])
        location = f'/resource_providers/{provider.uuid}'
        if version >= (1, 20):
            return (200, _provider_body(provider, req.script_name, version),
                    location)
        return 201, None, location

    def list_providers(self, req, version):
        known = {'name': (1, 0), 'uuid': (1, 0), 'member_of': (1, 3),
                 'resources': (1, 4), 'in_tree': (1, 14),
                 'required': (1, 18)}
        _check_params(req.GET, known, version)
        if 'in_tree' in req.GET:
            raise not_served('in_tree (nested providers)')
        uuid = req.GET.get('uuid')
        if uuid is not None and not _is_uuid(uuid):
            raise _query_error(f"Failed validating 'format': {uuid!r} is "
                               "not a 'uuid'")
        member_in, member_out = _parse_member_of(
            req.GET.getall('member_of'), version)
        query = self._filter_query(req.GET, version)
        found = self.model.find(req.GET.get('name'), uuid, member_in,
                                member_out)
        if query is not None:
            found = [p for p in found if self.model.matches(p, query)
                     and self.model.fits(p, query.resources)]
        return 200, {'resource_providers': [
            _provider_body(p, req.script_name, version) for p in found]}

    def _filter_query(self, params, version
                      ) -> typing.Optional[model.CandidateQuery]:
        """``resources`` and ``required`` of ``GET /resource_providers``
        as a query of the model (None: neither)."""
        if not {'resources', 'required'} & set(params):
            return None
        resources = (_parse_resources(params.getall('resources')[-1])
                     if 'resources' in params else {})
        values = params.getall('required')
        if version < (1, 39):
            values = values[-1:]   # before 1.39 the last one counts
        required, forbidden, any_of = self._parse_traits(values, version)
        return model.CandidateQuery(resources, frozenset(required),
                                    frozenset(forbidden), (), frozenset(),
                                    None, any_of)

    def get_provider(self, req, version, uuid):
        return 200, _provider_body(self.model.provider(uuid),
                                   req.script_name, version)

    def update_provider(self, req, version, uuid):
        self.model.provider(uuid)
        schema = _provider_schema(version)
        schema['properties'].pop('uuid')
        body = self._body(req, schema)
        if body.get('parent_provider_uuid'):
            raise not_served('parent_provider_uuid (nested providers)')
        provider = self.model.rename_provider(uuid, body['name'])
        return 200, _provider_body(provider, req.script_name, version)

    def delete_provider(self, req, version, uuid):
        if uuid not in self.model.providers:
            raise APIError(404, f'No resource provider with uuid {uuid} '
                           'found for delete')
        try:
            self.model.remove_provider(uuid)
        except model.InUse as exc:
            raise APIError(409, str(exc), 'placement.resource_provider.inuse')
        self._aggregate_order.pop(uuid, None)
        return 204, None

    # -- inventories -----------------------------------------------------

    def _inventories_body(self, provider: model.Provider) -> dict:
        return {'resource_provider_generation': provider.generation,
                'inventories': copy.deepcopy(provider.inventories)}

    def get_inventories(self, req, version, uuid):
        return 200, self._inventories_body(self.model.provider(uuid))

    @staticmethod
    def _inventory(uuid: str, rc: str, data: dict, version,
                   action: str = 'update') -> dict:
        """A complete inventory record, checked as Placement checks it.

        :param uuid: the provider.
        :param rc: the resource class.
        :param data: the inventory's fields in the request.
        :param version: the request's microversion.
        :param action: "update" or "create", for the error text.
        """
        if rc not in _STANDARD_RCS and not _CUSTOM_RE.match(rc):
            raise APIError(400, 'Unknown resource class in inventory for '
                           f'resource provider {uuid}: No such resource '
                           f'class {rc}.')
        record = model.inventory(data)
        if version >= (1, 26):
            bad, limit = record['reserved'] > record['total'], 'total'
        else:
            bad = record['reserved'] >= record['total']
            limit = 'or equal to total'
        if bad:
            raise APIError(400, f'Unable to {action} inventory for resource '
                           f'provider {uuid}: Invalid inventory for '
                           f"'{rc}' on resource provider '{uuid}'. The "
                           f'reserved value is greater than {limit}.')
        return record

    def put_inventories(self, req, version, uuid):
        self.model.provider(uuid)
        body = self._body(req, _obj({
            'resource_provider_generation': _GENERATION,
            'inventories': {'type': 'object', 'patternProperties': {
                '^[A-Z0-9_]+$': _INVENTORY},
                'additionalProperties': False}},
            ['resource_provider_generation', 'inventories']))
        inventories = {rc: self._inventory(uuid, rc, data, version)
                       for rc, data in body['inventories'].items()}
        self._check_in_use(uuid, inventories)
        provider = self.model.set_inventories(
            uuid, body['resource_provider_generation'], inventories)
        return 200, self._inventories_body(provider)

    def _one_inventory(self, uuid: str, rc: str) -> dict:
        provider = self.model.provider(uuid)
        if rc not in provider.inventories:
            raise APIError(404, f'No inventory of class {rc} for {uuid}')
        return provider.inventories[rc]

    def _inventory_body(self, uuid: str, rc: str) -> dict:
        return dict(self._one_inventory(uuid, rc),
                    resource_provider_generation=self.model.provider(
                        uuid).generation)

    def post_inventory(self, req, version, uuid):
        provider = self.model.provider(uuid)
        body = self._body(req, _obj(
            dict(_INVENTORY_FIELDS, resource_class=_RC_NAME,
                 resource_provider_generation=_GENERATION),
            ['total', 'resource_class']))
        rc = body.pop('resource_class')
        generation = body.pop('resource_provider_generation',
                              provider.generation)
        inventories = dict(provider.inventories)
        inventories[rc] = self._inventory(uuid, rc, body, version, 'create')
        if rc in provider.inventories:
            raise APIError(409, 'Update conflict: Inventory for requested '
                           f'resource class {rc} already exists.')
        self.model.set_inventories(uuid, generation, inventories)
        return (201, self._inventory_body(uuid, rc),
                f'/resource_providers/{uuid}/inventories/{rc}')

    def get_inventory(self, req, version, uuid, rc):
        return 200, self._inventory_body(uuid, rc)

    def put_inventory(self, req, version, uuid, rc):
        provider = self.model.provider(uuid)
        body = self._body(req, _obj(
            dict(_INVENTORY_FIELDS, resource_provider_generation=_GENERATION),
            ['total', 'resource_provider_generation']))
        generation = body.pop('resource_provider_generation')
        record = self._inventory(uuid, rc, body, version)
        if rc not in provider.inventories:
            raise APIError(400, 'No inventory record with resource class '
                           f'for resource provider {uuid}: {rc}')
        inventories = dict(provider.inventories)
        inventories[rc] = record
        self.model.set_inventories(uuid, generation, inventories)
        return 200, self._inventory_body(uuid, rc)

    def delete_inventory(self, req, version, uuid, rc):
        provider = self.model.provider(uuid)
        if rc not in provider.inventories:
            raise APIError(404, f'No inventory of class {rc} found for '
                           'delete')
        inventories = dict(provider.inventories)
        del inventories[rc]
        self._check_in_use(uuid, inventories)
        self.model.set_inventories(uuid, provider.generation, inventories)
        return 204, None

    def delete_inventories(self, req, version, uuid):
        if version < (1, 5):
            raise APIError(405, 'The method DELETE is not allowed for this '
                           'resource.', headers={'Allow': 'GET, POST, PUT'})
        provider = self.model.provider(uuid)
        self._check_in_use(uuid, {})
        self.model.set_inventories(uuid, provider.generation, {})
        return 204, None

    def _check_in_use(self, uuid: str, inventories: typing.Mapping) -> None:
        """409 when inventory that allocations use would go."""
        used = self.model.used(uuid)
        gone = [rc for rc in used if used[rc] and rc not in inventories]
        if gone:
            standard = list(os_resource_classes.STANDARDS)
            gone.sort(key=lambda rc: (standard.index(rc), rc)
                      if rc in _STANDARD_RCS else (len(standard), rc))
            raise APIError(409, f"Inventory for '{', '.join(gone)}' on "
                           f"resource provider '{uuid}' in use.",
                           'placement.inventory.inuse')

    # -- usages ----------------------------------------------------------

    def get_usages(self, req, version, uuid):
        provider = self.model.provider(uuid)
        used = self.model.used(uuid)
        return 200, {'resource_provider_generation': provider.generation,
                     'usages': {rc: used.get(rc, 0)
                                for rc in provider.inventories}}

    def get_project_usages(self, req, version):
        self._since(version, (1, 9))
        known = {'project_id': (1, 9), 'user_id': (1, 9),
                 'consumer_type': (1, 38)}
        _check_params(req.GET, known, version)
        identity = {'type': 'string', 'minLength': 1, 'maxLength': 255}
        try:
            jsonschema.validate(dict(req.GET), _obj(
                {'project_id': identity, 'user_id': identity,
                 'consumer_type': {'type': 'string'}}, ['project_id']))
        except jsonschema.ValidationError as exc:
            raise _query_error(str(exc))
        wanted = req.GET.get('consumer_type')
        totals: typing.Dict[str, dict] = {}
        for consumer in self.model.consumers.values():
            if consumer.project_id != req.GET['project_id'] or \
                    req.GET.get('user_id', consumer.user_id) != \
                    consumer.user_id:
                continue
            kind = consumer.type or 'unknown'
            if wanted not in (None, 'all', kind):
                continue
            entry = totals.setdefault(kind, {'consumer_count': 0})
            entry['consumer_count'] += 1
            for resources in consumer.allocations.values():
                for rc, n in resources.items():
                    entry[rc] = entry.get(rc, 0) + n
        if version < (1, 38):
            usages: typing.Dict[str, int] = {}
            for entry in totals.values():
                for rc, n in entry.items():
                    if rc != 'consumer_count':
                        usages[rc] = usages.get(rc, 0) + n
            return 200, {'usages': usages}
        if wanted == 'all':
            merged: typing.Dict[str, int] = {}
            for entry in totals.values():
                for rc, n in entry.items():
                    merged[rc] = merged.get(rc, 0) + n
            totals = {'all': merged} if merged else {}
        return 200, {'usages': totals}

    # -- aggregates ------------------------------------------------------

    def get_aggregates(self, req, version, uuid):
        self._since(version, (1, 1))
        provider = self.model.provider(uuid)
        order = self._aggregate_order.get(uuid)
        if order is None or set(order) != provider.aggregates:
            order = sorted(provider.aggregates)
        body = {'aggregates': order}
        if version >= (1, 19):
            body['resource_provider_generation'] = provider.generation
        return 200, body

    def put_aggregates(self, req, version, uuid):
        self._since(version, (1, 1))
        self.model.provider(uuid)
        aggregates_schema = {'type': 'array', 'uniqueItems': True,
                             'items': _UUID}
        generation = model.UNCHECKED
        if version >= (1, 19):
            body = self._body(req, _obj(
                {'aggregates': aggregates_schema,
                 'resource_provider_generation': _GENERATION},
                ['aggregates', 'resource_provider_generation']))
            generation = body['resource_provider_generation']
            aggregates = body['aggregates']
        else:
            aggregates = self._body(req, aggregates_schema)
        try:
            self.model.set_aggregates(uuid, generation, aggregates)
        except model.GenerationConflict:
            raise APIError(409, "Resource provider's generation already "
                           'changed. Please update the generation and try '
                           'again.', 'placement.concurrent_update')
        self._aggregate_order[uuid] = list(aggregates)
        return self.get_aggregates(req, version, uuid)

    # -- traits ----------------------------------------------------------

    def list_traits(self, req, version):
        self._since(version, (1, 6))
        _check_params(req.GET, {'name': (1, 6), 'associated': (1, 6)},
                      version)
        names = set(self.model._standard) | self.model.custom_traits
        name = req.GET.get('name')
        if name is not None:
            if name.startswith('in:'):
                names &= set(name[3:].split(','))
            elif name.startswith('startswith:'):
                names = {n for n in names
                         if n.startswith(name[len('startswith:'):])}
            else:
                raise APIError(400, 'Badly formatted name parameter. '
                               'Expected name query string parameter in '
                               "form: ?name=[in|startswith]:[name1,name2|"
                               f"prefix]. Got: \"{name}\"")
        associated = req.GET.get('associated')
        if associated is not None:
            if associated not in ('true', 'false'):
                raise APIError(400, 'The query parameter "associated" only '
                               'accepts "true" or "false"')
            used = set().union(*(p.traits
                                 for p in self.model.providers.values()))
            names = (names & used if associated == 'true'
                     else names - used)
        return 200, {'traits': sorted(names)}

    def get_trait(self, req, version, name):
        self._since(version, (1, 6))
        if not self.model.known_trait(name):
            raise APIError(404, f'No such trait(s): {name}')
        return 204, None

    def put_trait(self, req, version, name):
        self._since(version, (1, 6))
        if not _CUSTOM_RE.match(name) or len(name) > 255:
            raise APIError(400, "The trait is invalid. A valid trait must be "
                           "no longer than 255 characters, start with the "
                           "prefix \"CUSTOM_\" and use following characters: "
                           "\"A\"-\"Z\", \"0\"-\"9\" and \"_\"")
        status = 201 if self.model.add_trait(name) else 204
        return status, None, f'/traits/{name}'

    def delete_trait(self, req, version, name):
        self._since(version, (1, 6))
        if name in self.model._standard:
            raise APIError(400, f'Cannot delete standard trait {name}.')
        self.model.delete_trait(name)
        return 204, None

    def get_traits(self, req, version, uuid):
        self._since(version, (1, 6))
        provider = self.model.provider(uuid)
        return 200, {'traits': sorted(provider.traits),
                     'resource_provider_generation': provider.generation}

    def put_traits(self, req, version, uuid):
        self._since(version, (1, 6))
        self.model.provider(uuid)
        body = self._body(req, _obj(
            {'traits': {'type': 'array', 'uniqueItems': True, 'items': {
                'type': 'string', 'pattern': '^[A-Z0-9_]+$',
                'maxLength': 255}},
             'resource_provider_generation': _GENERATION},
            ['traits', 'resource_provider_generation']))
        self._set_traits(uuid, body['resource_provider_generation'],
                         body['traits'])
        return self.get_traits(req, version, uuid)

    def _set_traits(self, uuid: str, generation, traits) -> None:
        try:
            self.model.set_traits(uuid, generation, traits)
        except model.GenerationConflict:
            raise APIError(409, "Resource provider's generation already "
                           'changed. Please update the generation and try '
                           'again.', 'placement.concurrent_update')

    def delete_traits(self, req, version, uuid):
        self._since(version, (1, 6))
        provider = self.model.provider(uuid)
        self._set_traits(uuid, provider.generation, [])
        return 204, None

    # -- allocation candidates -------------------------------------------

    def parse_candidate_query(self, params, version
                              ) -> model.CandidateQuery:
        """Validate ``GET /allocation_candidates`` parameters.

        :param params: the query string as a multidict (``getall``).
        :param version: the request's microversion.
        :raises APIError: 400 naming the bad parameter, as Placement does;
            501 for granular groups and ``in_tree``, not served.
        """
        known = {'resources': (1, 10), 'limit': (1, 16),
                 'required': (1, 17), 'member_of': (1, 21),
                 'in_tree': (1, 31), 'root_required': (1, 35),
                 'group_policy': (1, 25), 'same_subtree': (1, 36)}
        granular = re.compile(r'^(resources|required|member_of|in_tree)'
                              r'[0-9A-Za-z_-]+$')
        if version >= (1, 25) and any(granular.match(k) for k in params):
            raise not_served('granular request groups')
        _check_params(params, known, version)
        for key in ('in_tree', 'group_policy', 'same_subtree'):
            if key in params:
                raise not_served(f'{key} (nested providers, granular '
                                 'request groups)')
        if 'member_of' in params and 'resources' not in params:
            raise _query_error('All member_of parameters must be associated '
                               'with resources. Found the following orphaned '
                               'member_of keys: member_of')
        if len(params.getall('resources')) != 1:
            raise _query_error("'resources' is a required property")
        resources = _parse_resources(params.getall('resources')[0])
        values = params.getall('required')
        if version < (1, 39):
            values = values[-1:]   # before 1.39 the last one counts
        required, forbidden, any_of = self._parse_traits(values, version)
        # Every provider is its own root here: root traits are its traits.
        root_in, root_out, _ = self._parse_traits(
            params.getall('root_required'), version, any_of=False)
        required |= root_in
        forbidden |= root_out
        member_in, member_out = _parse_member_of(
            params.getall('member_of'), version)
        return model.CandidateQuery(
            resources, frozenset(required), frozenset(forbidden),
            tuple(frozenset(m) for m in member_in), frozenset(member_out),
            _parse_limit(params.getall('limit')), any_of)

    def allocation_candidates(self, req, version):
        self._since(version, (1, 10))
        query = self.parse_candidate_query(req.GET, version)
        requests = []
        summaries = {}
        for provider in self.model.candidates(query):
            requests.append(self._allocation_request(provider, query,
                                                     version))
            used = self.model.used(provider.uuid)
            summary = {'resources': {
                rc: {'capacity': provider.capacity(rc),
                     'used': used.get(rc, 0)}
                for rc in provider.inventories
                if version >= (1, 27) or rc in query.resources}}
            if version >= (1, 17):
                summary['traits'] = sorted(provider.traits)
            if version >= (1, 29):
                summary['parent_provider_uuid'] = None
                summary['root_provider_uuid'] = provider.uuid
            summaries[provider.uuid] = summary
        return 200, {'allocation_requests': requests,
                     'provider_summaries': summaries}

    @staticmethod
    def _allocation_request(provider: model.Provider,
                            query: model.CandidateQuery, version) -> dict:
        if version < (1, 12):
            return {'allocations': [{
                'resource_provider': {'uuid': provider.uuid},
                'resources': dict(query.resources)}]}
        alloc = {'allocations': {provider.uuid: {
            'resources': dict(query.resources)}}}
        if version >= (1, 34):
            alloc['mappings'] = {'': [provider.uuid]}
        return alloc

    def _parse_traits(self, values, version, any_of: bool = True):
        """``required`` values -> (required, forbidden, any-of sets).

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
                raise _query_error("The format 'in:HW_CPU_X86_VMX,"
                                   "CUSTOM_MAGIC' only supported since "
                                   'microversion 1.39.')
            if any_of and value.startswith('in:'):
                names = value[3:].split(',')
                self._known_traits(names, value, form)
                groups.append(frozenset(names))
                continue
            for name in value.split(','):
                target = required
                if name.startswith('!') and version >= (1, 22):
                    name, target = name[1:], forbidden
                self._known_traits([name], value, form)
                target.add(name)
        both = ', '.join(sorted(required & forbidden))
        if both:
            raise _query_error('Conflicting required and forbidden traits '
                               f'found: {both}')
        return required, forbidden, tuple(groups)

    def _known_traits(self, names, value: str, form: str) -> None:
        if not all(names) or any(not _RC_RE.match(n) for n in names):
            raise _query_error("Expected 'required' parameter value of the "
                               f'form: {form}. Got: {value}')
        unknown = [n for n in names if not self.model.known_trait(n)]
        if unknown:
            raise APIError(400, f'No such trait(s): {", ".join(unknown)}.')

    # -- allocations -----------------------------------------------------

    def get_allocations(self, req, version, consumer):
        data = self.model.consumers.get(consumer)
        if data is None:
            return 200, {'allocations': {}}
        body = {'allocations': {
            rp: {'resources': dict(res),
                 'generation': self.model.providers[rp].generation}
            for rp, res in data.allocations.items()}}
        if version >= (1, 12):
            body['project_id'] = data.project_id
            body['user_id'] = data.user_id
        if version >= (1, 28):
            body['consumer_generation'] = data.generation
        if version >= (1, 38):
            body['consumer_type'] = data.type or 'unknown'
        return 200, body

    def get_provider_allocations(self, req, version, uuid):
        provider = self.model.provider(uuid)
        found = {c: {'resources': dict(data.allocations[uuid])}
                 for c, data in self.model.consumers.items()
                 if uuid in data.allocations}
        return 200, {'allocations': found,
                     'resource_provider_generation': provider.generation}

    def _write(self, consumer: str, data: dict, version) -> model.Write:
        """A consumer's allocations in a request body (validated).

        :param consumer: the consumer's uuid.
        :param data: its part of the body.
        :param version: the request's microversion.
        """
        if version < (1, 12):
            allocations = {a['resource_provider']['uuid']:
                           dict(a['resources']) for a in data['allocations']}
        else:
            allocations = {rp: dict(a['resources'])
                           for rp, a in data['allocations'].items()}
        current = self.model.consumers.get(consumer)
        return model.Write(
            allocations, data.get('project_id', INCOMPLETE_CONSUMER),
            data.get('user_id', INCOMPLETE_CONSUMER),
            data.get('consumer_type', current.type if current else None),
            data['consumer_generation'] if version >= (1, 28)
            else model.UNCHECKED)

    def _apply(self, writes: typing.Mapping[str, model.Write]) -> None:
        """Write consumers' allocations; the model's errors as Placement
        words them."""
        for write in writes.values():
            for rp, resources in write.allocations.items():
                provider = self.model.providers.get(rp)
                if provider is None:
                    raise APIError(400, 'Allocation for resource provider '
                                   f"'{rp}' that does not exist.")
                for rc in resources:
                    if rc not in provider.inventories:
                        self._no_inventory(rp, rc)
        try:
            if len(writes) == 1:
                self.model.write(*next(iter(writes.items())))
            else:
                self.model.write_many(writes)
        except model.GenerationConflict as exc:
            raise APIError(409, 'Inventory and/or allocations changed while '
                           f'attempting to allocate: {exc}',
                           'placement.concurrent_update')
        except model.Conflict as exc:
            raise APIError(409, str(exc))

    def _no_inventory(self, rp: str, rc: str) -> None:
        """An allocation of a class the provider has no inventory of: 400
        for a class nobody has (Placement: no such class), else 409."""
        if rc not in _STANDARD_RCS and not any(
                rc in p.inventories for p in self.model.providers.values()):
            raise APIError(400, 'Unable to allocate inventory for consumer: '
                           f'No such resource class {rc}.')
        raise APIError(409, 'Unable to allocate inventory: Inventory for '
                       f"'{rc}' on resource provider '{rp}' invalid.")

    def put_allocations(self, req, version, consumer):
        if not _is_uuid(consumer):
            raise APIError(400, f'Malformed consumer_uuid: {consumer}')
        body = self._body(req, _consumer_schema(version))
        consumer = str(uuidlib.UUID(consumer))
        self._apply({consumer: self._write(consumer, body, version)})
        return 204, None

    def post_allocations(self, req, version):
        """Several consumers at once, all or nothing (microversion 1.13);
        an empty ``allocations`` removes a consumer's allocations."""
        self._since(version, (1, 13))
        body = self._body(req, _post_allocations_schema(version))
        writes = {}
        for consumer, data in body.items():
            consumer = str(uuidlib.UUID(consumer))
            writes[consumer] = self._write(consumer, data, version)
        self._apply(writes)
        return 204, None

    def delete_allocations(self, req, version, consumer):
        self.model.delete(consumer)
        return 204, None


def _check_params(params, known: typing.Mapping[str, tuple],
                  version) -> None:
    """400 for a parameter the version does not know."""
    for key in params:
        if key not in known or version < known[key]:
            raise _query_error('Additional properties are not allowed '
                               f"('{key}' was unexpected)")


def _is_uuid(value) -> bool:
    try:
        uuidlib.UUID(str(value))
    except ValueError:
        return False
    return True


def _parse_limit(values) -> typing.Optional[int]:
    if not values:
        return None
    raw = values[-1]
    if not raw.isdigit() or int(raw) < 1:
        raise _query_error("Failed validating 'pattern' in "
                           "schema['properties']['limit']")
    return int(raw)


def _parse_resources(text: str) -> typing.Dict[str, int]:
    """``resources=VCPU:2,MEMORY_MB:1024`` -> {class: amount}; custom
    classes are taken as existing (``/resource_classes`` is not served).
    """
    resources: typing.Dict[str, int] = {}
    for part in text.split(',') if text else ['']:
        rc, colon, amount = part.partition(':')
        if not colon or not rc:
            raise APIError(400, 'Badly formed resources parameter. Expected '
                           'resources query string parameter in form: '
                           '?resources=VCPU:2,MEMORY_MB:1024. Got: '
                           f'{part or ("empty string" if not text else "")}.',
                           'placement.query.bad_value')
        if rc in resources:
            raise APIError(400, 'Badly formed resources parameter: resource '
                           f'class {rc} appears more than once',
                           'placement.query.duplicate_key')
        try:
            resources[rc] = int(amount)
        except ValueError:
            raise _query_error(f'Requested resource {rc} expected positive '
                               f'integer amount. Got: {amount}.')
        if resources[rc] < 1:
            raise _query_error(f'Requested resource {rc} requires amount >= '
                               f'1. Got: {amount}.')
        if rc not in _STANDARD_RCS and not _CUSTOM_RE.match(rc):
            raise APIError(400, 'Invalid resource class in resources '
                           f'parameter: No such resource class {rc}.')
    return resources


def _parse_member_of(values, version):
    """-> (list of any-of sets that must each match, forbidden set)."""
    if len(values) > 1 and version < (1, 24):
        raise _query_error('Multiple member_of parameters are not supported '
                           'before microversion 1.24.')
    member_in: typing.List[typing.Set[str]] = []
    member_out: typing.Set[str] = set()
    for value in values:
        negate = value.startswith('!')
        if negate:
            if version < (1, 32):
                raise _query_error('Forbidden member_of parameters are not '
                                   'supported in the specified microversion')
            value = value[1:]
        listed = value.startswith('in:')
        uuids = (value[3:] if listed else value).split(',')
        if not listed and len(uuids) > 1:
            raise _query_error(
                "Multiple values for 'member_of' must be prefixed with the "
                "'in:' or '!in:' keyword using the valid microversion.")
        if not all(_is_uuid(u) for u in uuids):
            raise _query_error("Expected 'member_of' parameter to contain "
                               f'valid UUID(s). Got: {value}')
        if negate:
            member_out.update(uuids)
        else:
            member_in.append(set(uuids))
    return member_in, member_out
