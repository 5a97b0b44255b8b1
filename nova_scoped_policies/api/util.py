"""Helpers every handler uses: JSON in and out, ids, errors."""

import functools
import re
import typing
import uuid as uuidlib

import jsonschema
from oslo_serialization import jsonutils
from oslo_middleware import request_id
import webob
import webob.exc

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies import errors
from nova_scoped_policies import policy
from nova_scoped_policies import validation

SHOWN = 64

CONTEXT = 'nsp.context'
SERVICE = 'nsp.service'


def env(req: webob.Request):
    """(request context, service) of a request."""
    return req.environ[CONTEXT], req.environ[SERVICE]


def json_response(req: webob.Request, body, status: int = 200
                  ) -> webob.Response:
    resp = webob.Response(status=status, charset='utf-8')
    if body is not None:
        resp.content_type = 'application/json'
        resp.text = jsonutils.dumps(body, sort_keys=True)
    else:
        resp.content_type = None
    return resp


def fault(req: webob.Request, exc: webob.exc.HTTPException
          ) -> webob.Response:
    """An error as placement-style JSON: ``{"errors": [{status, title,
    detail, request_id}]}``, keeping headers such as Allow."""
    error = {'status': exc.code, 'title': exc.title,
             'detail': exc.explanation or exc.detail or exc.title,
             'request_id': req.environ.get(request_id.ENV_REQUEST_ID)}
    code = getattr(exc, 'error_code', None)
    if code:
        error['code'] = code
    resp = json_response(req, {'errors': [error]}, status=exc.code)
    for name in ('Allow', 'WWW-Authenticate'):
        if name in exc.headers:
            resp.headers[name] = exc.headers[name]
    return resp


FAULTS: typing.Mapping[type, type] = {
    store_api.NotFound: webob.exc.HTTPNotFound,
    store_api.Conflict: webob.exc.HTTPConflict,
    errors.Unavailable: webob.exc.HTTPServiceUnavailable,
}
"""The policy store's and the services' errors (:mod:`..errors`) and the
HTTP error each becomes. Applied once, by :func:`json_faults` around the
dispatcher; handlers call the store and the services directly and never
turn these into HTTP errors themselves."""


def http_error(exc: Exception) -> typing.Optional[webob.exc.HTTPException]:
    """The HTTP error of a store or service error, or None if it is not
    one."""
    for error, http in FAULTS.items():
        if isinstance(exc, error):
            return http(explanation=str(exc))
    return None


def json_faults(func):
    """Turn HTTP exceptions raised by a wsgify'd method into JSON faults,
    and the store's and services' errors into their HTTP errors
    (:data:`FAULTS`).
    """
    @functools.wraps(func)
    def wrapper(self, req, *args, **kwargs):
        try:
            return func(self, req, *args, **kwargs)
        except webob.exc.HTTPException as exc:
            return fault(req, exc)
        except tuple(FAULTS) as exc:
            return fault(req, http_error(exc))
    return wrapper


MAX_DEPTH = 32
"""Deepest nesting of lists and objects a body may have."""
_BAD_CHARACTER = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]')


def _checked(data, path: str = 'body', depth: int = 0) -> None:
    """Refuse nesting beyond :data:`MAX_DEPTH` and strings with control
    characters or lone surrogates (no database stores them alike)."""
    if depth > MAX_DEPTH:
        raise webob.exc.HTTPBadRequest(
            explanation=f'{path}: nested deeper than {MAX_DEPTH} levels')
    if isinstance(data, str):
        if _BAD_CHARACTER.search(data):
            raise webob.exc.HTTPBadRequest(
                explanation=f'{path}: control characters and lone '
                'surrogates are not allowed')
    elif isinstance(data, dict):
        for key, value in data.items():
            where = f'{path}.{key}' if path != 'body' else str(key)
            _checked(key, where[:200], depth + 1)
            _checked(value, where[:200], depth + 1)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            _checked(value, f'{path}[{i}]', depth + 1)


def extract_json(req: webob.Request, schema: dict) -> dict:
    """The request body, validated against ``schema``.

    :raises webob.exc.HTTPBadRequest: naming the first bad field, echoing
        at most a short prefix of a bad value.
    """
    if req.content_type != 'application/json':
        raise webob.exc.HTTPUnsupportedMediaType(
            explanation='The body must be application/json.')
    try:
        data = jsonutils.loads(req.body or b'')
    except RecursionError:
        raise webob.exc.HTTPBadRequest(
            explanation=f'body: nested deeper than {MAX_DEPTH} levels')
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(
            explanation=f'Malformed JSON: {policy.shown(str(exc))}')
    _checked(data)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(data),
                    key=lambda e: (len(e.absolute_path), str(e.message)))
    if errors:
        error = errors[0]
        where = validation.path(error.absolute_path, 'body')
        message = error.message
        if len(message) > 2 * SHOWN:
            message = message[:2 * SHOWN] + '...'
        raise webob.exc.HTTPBadRequest(
            explanation=f'{where[:200]}: {message}')
    return data


def query_flag(req: webob.Request, name: str) -> bool:
    raw = req.GET.get(name, 'false').lower()
    if raw not in ('true', 'false', '1', '0', 'yes', 'no'):
        raise webob.exc.HTTPBadRequest(
            explanation=f'{name}: {raw!r}: must be true or false')
    return raw in ('true', '1', 'yes')


def check_uuid(value: str, field: str) -> str:
    try:
        return str(uuidlib.UUID(value))
    except (ValueError, TypeError, AttributeError):
        raise webob.exc.HTTPBadRequest(
            explanation=f'{field}: {policy.shown(value)}: must be a uuid')


def bad_policy(exc: policy.PolicyError) -> webob.exc.HTTPBadRequest:
    return webob.exc.HTTPBadRequest(explanation=str(exc))
