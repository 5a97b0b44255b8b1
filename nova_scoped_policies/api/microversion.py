"""Microversions of the policy API (``OpenStack-API-Version``).

Every response names the version it was served at. A request without the
header gets the minimum; ``latest`` gets the maximum.
"""

import microversion_parse

SERVICE_TYPE = 'scoped-policies'
HEADER = 'OpenStack-API-Version'
VERSIONS = [
    '1.0',  # scopes, scoped groups, membership and audit
    '1.1',  # /stacks: joint decisions held under a lease; scope parents
    '1.2',  # /repairs (the fewest moves that end every violation);
    #         stack audit; stack statuses expired and live
    '1.3',  # groups in complex-anti-affinity.rst's form: a policy object
    #         (or a list of them) with rules; no policies, no metadata
    '1.4',  # POST /repairs/apply starts a task (202, Location); GET
    #         /repairs/tasks[/{id}], DELETE /repairs/tasks/{id}; a repair
    #         plan says needs_administrator
    '1.5',  # GET /export (admins): the live cloud as a simulator
    #         scenario, with project and obfuscate
]
MIN_VERSION = VERSIONS[0]
MAX_VERSION = VERSIONS[-1]


class Unacceptable(ValueError):
    """A well-formed version outside the supported range (406)."""


def extract(environ: dict) -> microversion_parse.Version:
    """The version a request asks for.

    :raises Unacceptable: the version is out of range.
    :raises ValueError: the header is malformed.
    """
    headers = microversion_parse.headers_from_wsgi_environ(environ)
    try:
        return microversion_parse.extract_version(headers, SERVICE_TYPE,
                                                  VERSIONS)
    except TypeError as exc:
        # microversion_parse reports unparsable strings as TypeError
        raise ValueError(str(exc)) from exc
    except ValueError as exc:
        raise Unacceptable(str(exc)) from exc


def require(environ: dict, minimum: str) -> bool:
    """Whether the request's version is at least ``minimum``."""
    version = environ.get('nsp.microversion')
    wanted = microversion_parse.parse_version_string(minimum)
    return version is not None and (version.major, version.minor) >= (
        wanted.major, wanted.minor)
