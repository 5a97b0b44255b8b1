"""The WSGI application: the route table, dispatch, header checks and
answers (2xx and errors) with their version and cache headers."""

import re
import time
import typing
import uuid as uuidlib
from wsgiref import handlers as wsgi_handlers

import webob
import webob.dec
import webob.exc

from oslo_serialization import jsonutils

from nova_scoped_policies.placement import model
from nova_scoped_policies.placement.fake import aggregates
from nova_scoped_policies.placement.fake import allocations
from nova_scoped_policies.placement.fake import candidates
from nova_scoped_policies.placement.fake import errors
from nova_scoped_policies.placement.fake import inventories
from nova_scoped_policies.placement.fake import microversion
from nova_scoped_policies.placement.fake import providers
from nova_scoped_policies.placement.fake import traits
from nova_scoped_policies.placement.fake import usages

_JSON = 'application/json'


def root(app, req, version):
    """``GET /``: the version document."""
    return 200, {'versions': [{
        'id': 'v1.0', 'status': 'CURRENT',
        'min_version': '%d.%d' % microversion.MIN_VERSION,
        'max_version': '%d.%d' % app.max_version,
        'links': [{'rel': 'self', 'href': ''}]}]}


_RP = r'/resource_providers/(?P<uuid>[^/]+)'

ROUTES = (
    (r'/$', {'GET': (root, False)}),
    (r'/resource_providers$', {
        'GET': (providers.list_providers, False),
        'POST': (providers.create_provider, True)}),
    (_RP + '$', {'GET': (providers.get_provider, False),
                 'PUT': (providers.update_provider, True),
                 'DELETE': (providers.delete_provider, False)}),
    (_RP + '/inventories$', {
        'GET': (inventories.get_inventories, False),
        'PUT': (inventories.put_inventories, True),
        'POST': (inventories.post_inventory, True),
        'DELETE': (inventories.delete_inventories, False)}),
    (_RP + '/inventories/(?P<rc>[^/]+)$', {
        'GET': (inventories.get_inventory, False),
        'PUT': (inventories.put_inventory, True),
        'DELETE': (inventories.delete_inventory, False)}),
    (_RP + '/usages$', {'GET': (usages.get_usages, False)}),
    (_RP + '/aggregates$', {'GET': (aggregates.get_aggregates, False),
                            'PUT': (aggregates.put_aggregates, True)}),
    (_RP + '/traits$', {'GET': (traits.get_traits, False),
                        'PUT': (traits.put_traits, True),
                        'DELETE': (traits.delete_traits, False)}),
    (_RP + '/allocations$', {
        'GET': (allocations.get_provider_allocations, False)}),
    (r'/traits$', {'GET': (traits.list_traits, False)}),
    (r'/traits/(?P<name>[^/]+)$', {
        'GET': (traits.get_trait, False),
        'PUT': (traits.put_trait, False),
        'DELETE': (traits.delete_trait, False)}),
    (r'/usages$', {'GET': (usages.get_project_usages, False)}),
    (r'/allocation_candidates$', {
        'GET': (candidates.allocation_candidates, False)}),
    (r'/allocations$', {'POST': (allocations.post_allocations, True)}),
    (r'/allocations/(?P<consumer>[^/]+)$', {
        'GET': (allocations.get_allocations, False),
        'PUT': (allocations.put_allocations, True),
        'DELETE': (allocations.delete_allocations, False)}),
)
"""Path regex, {method: (handler, takes a JSON body)}. A handler is
called with the app, the request, its microversion and the path's named
groups; it returns (status, JSON body or None[, location path])."""

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

_COMPILED = [(re.compile(p), m) for p, m in ROUTES]
_NOT_SERVED = [(re.compile(p), what) for p, what in NOT_SERVED]


class FakePlacement:
    """The WSGI application; its state is ``self.model``.

    :param max_version: the highest microversion to claim, e.g. "1.29" to
        play an old Placement.
    """

    def __init__(self, max_version: str = '%d.%d' % microversion.MAX_VERSION
                 ) -> None:
        self.max_version = microversion.parse_version(max_version)
        # every microversion served, for microversion_parse
        self._served = microversion.served(self.max_version)
        self.model = model.Placement()
        # provider -> aggregates in the order last PUT (Placement lists
        # them so; the model holds a set)
        self.aggregate_order: typing.Dict[str, typing.List[str]] = {}

    def parse_candidate_query(self, params, version
                              ) -> model.CandidateQuery:
        """Validate ``GET /allocation_candidates`` parameters (see
        :func:`.candidates.parse_query`).

        :param params: the query string as a multidict (``getall``).
        :param version: the request's microversion.
        :raises APIError: 400 naming the bad parameter, as Placement does;
            501 for granular groups and ``in_tree``, not served.
        """
        return candidates.parse_query(self.model, params, version)

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
            version = microversion.extract(req, self._served)
            return self._dispatch(req, version)
        except errors.APIError as err:
            # an unusable version header: no version in the answer
            return _error(req, err, None if err.version_error else version)

    def _dispatch(self, req: webob.Request, version) -> webob.Response:
        path = req.path_info or '/'
        for pattern, methods in _COMPILED:
            match = pattern.match(path)
            if not match:
                continue
            if req.method not in methods:
                allow = ', '.join(sorted(methods))
                raise errors.APIError(405, f'The method {req.method} is not '
                                      'allowed for this resource.',
                                      headers={'Allow': allow})
            handler, takes_json = methods[req.method]
            _check_headers(req, takes_json)
            try:
                status, body, *location = handler(self, req, version,
                                                  **match.groupdict())
            except model.Error as err:
                status, code = errors.status_of(err)
                raise errors.APIError(status, str(err), code)
            resp = _respond(status, body, version,
                            path.startswith('/traits/'))
            if location:
                resp.location = req.host_url + req.script_name + \
                    location[0]
            return resp
        for pattern, what in _NOT_SERVED:
            if pattern.match(path):
                raise errors.not_served(f'{req.method} {path} ({what})')
        raise errors.APIError(404, 'The resource could not be found.')


def _accepts_json(req: webob.Request) -> bool:
    return not req.accept or bool(req.accept.acceptable_offers([_JSON]))


def _check_headers(req: webob.Request, takes_json: bool) -> None:
    """Accept, Content-Type and Content-Length, as Placement checks them."""
    if not _accepts_json(req):
        raise errors.APIError(406, 'Only application/json is provided')
    # as Placement: an empty CONTENT_LENGTH (wsgiref sends one with every
    # bodiless request; PEP 3333 allows it) is no length
    length = req.environ.get('CONTENT_LENGTH')
    if length:
        try:
            int(length)
        except ValueError:
            raise errors.APIError(400,
                                  'content-length header must be an integer')
    if not takes_json:
        return
    if not req.content_type and req.content_length:
        raise errors.APIError(400, 'content-type header required when '
                              'content-length > 0')
    if req.content_type != _JSON:
        raise errors.APIError(415, 'The media type '
                              f'{req.content_type or None} is not supported, '
                              'use application/json')


def _respond(status: int, body, version, cache: bool = False
             ) -> webob.Response:
    """A 2xx answer.

    :param status: the HTTP status.
    :param body: the JSON body (None: none).
    :param version: the request's microversion.
    :param cache: whether a bodiless answer has Placement's cache headers
        too (``/traits/{name}``); 200s with a body have them.
    """
    resp = webob.Response(status=status)
    microversion.set_headers(resp, version)
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


def _error(req: webob.Request, err: errors.APIError, version
           ) -> webob.Response:
    """The error answer; ``version`` None: the request's version header
    could not be used (no version headers, no error code)."""
    resp = webob.Response(status=err.status)
    if version is not None:
        microversion.set_headers(resp, version)
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
