"""Microversions: the range served, reading a request's, answering with it.

Read as Placement reads them (microversion_parse: only placement's entry
of the ``OpenStack-API-Version`` header counts, none is 1.0, ``latest``
the newest served).
"""

import typing

import microversion_parse
import webob

from nova_scoped_policies.placement.fake import errors

MIN_VERSION = (1, 0)
MAX_VERSION = (1, 39)
HEADER = 'OpenStack-API-Version'

Version = typing.Tuple[int, int]


def parse_version(text: str) -> Version:
    """"1.36" -> (1, 36)."""
    major, minor = text.split('.')
    return int(major), int(minor)


def served(max_version: Version) -> typing.List[str]:
    """Every microversion from :data:`MIN_VERSION` to ``max_version``, as
    microversion_parse wants them ("1.0", "1.1", ...)."""
    return ['%d.%d' % (MIN_VERSION[0], minor) for minor in
            range(MIN_VERSION[1], max_version[1] + 1)]


def extract(req: webob.Request, versions: typing.Sequence[str]) -> Version:
    """The request's microversion.

    :param req: the request.
    :param versions: the versions served (:func:`served`).
    :raises errors.APIError: 400 for a version that does not parse, 406
        for one not served; both flagged ``version_error``.
    """
    try:
        found = microversion_parse.extract_version(
            req.headers, 'placement', versions)
    except TypeError as exc:
        raise errors.APIError(400, str(exc), version_error=True)
    except ValueError as exc:
        raise errors.APIError(406, str(exc), version_error=True)
    return found.major, found.minor


def set_headers(resp: webob.Response, version: Version) -> None:
    """The version headers of an answer."""
    resp.headers[HEADER] = 'placement %d.%d' % version
    resp.headers['Vary'] = HEADER.lower()


def require(version: Version, since: Version) -> None:
    """404 for a route the version does not have (as Placement).

    :param version: the request's microversion.
    :param since: the first one with the route.
    """
    if version < since:
        raise errors.APIError(404, 'The resource could not be found.')
