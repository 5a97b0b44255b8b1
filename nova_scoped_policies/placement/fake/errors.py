"""What the fake answers instead of a 2xx, and the model's errors as HTTP.

Error codes are Placement's (sent from microversion 1.23); what the fake
does not serve has a code of its own (:data:`NOT_SERVED_CODE`).
"""

import typing

from nova_scoped_policies.placement import model

DEFAULT_CODE = 'placement.undefined_code'
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


def query_error(detail: str) -> APIError:
    """The 400 of a query string parameter Placement rejects.

    :param detail: what is wrong with it.
    """
    return APIError(400, f'Invalid query string parameters: {detail}',
                    'placement.query.bad_value')


def generation_changed() -> APIError:
    """The 409 of a provider's aggregates or traits written with a stale
    generation."""
    return APIError(409, "Resource provider's generation already changed. "
                    'Please update the generation and try again.',
                    'placement.concurrent_update')


_STATUSES = (
    (model.GenerationConflict, 409, 'placement.concurrent_update'),
    (model.InUse, 409, 'placement.inventory.inuse'),
    (model.DuplicateName, 409, 'placement.duplicate_name'),
    (model.Conflict, 409, DEFAULT_CODE),
    (model.NotFound, 404, DEFAULT_CODE),
    (model.Invalid, 400, DEFAULT_CODE),
)
"""The model's errors, most specific first: status and error code."""


def status_of(err: model.Error) -> typing.Tuple[int, str]:
    """The status and error code of one of the model's errors (the one
    place they become HTTP)."""
    for cls, status, code in _STATUSES:
        if isinstance(err, cls):
            return status, code
    return 500, DEFAULT_CODE
