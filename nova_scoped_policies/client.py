"""The policy API client (keystoneauth1) the OpenStackClient plugin and
the dashboard share: one request, the microversion header, the API's
errors (Placement's form) as :class:`APIError`."""

import re
import typing

from keystoneauth1 import adapter as ks_adapter

from nova_scoped_policies.api import microversion
from nova_scoped_policies.conf import store as store_conf

_FIELD = re.compile(r'^([A-Za-z_][\w.\[\]]*): ')


class APIError(Exception):
    """The policy API refused a request.

    :param method: the HTTP method.
    :param url: the path asked for.
    :param status: the HTTP status.
    :param details: each error's ``detail`` (the body's text when it has
        no ``errors``).
    """

    def __init__(self, method: str, url: str, status: int,
                 details: typing.Sequence[str]) -> None:
        self.method, self.url, self.status = method, url, status
        self.details = list(details)
        super().__init__(f'{method} {url}: {status} {self.detail}')

    @property
    def detail(self) -> str:
        return '; '.join(self.details)

    def fields(self) -> typing.List[typing.Tuple[typing.Optional[str],
                                                 str]]:
        """(field, detail) of each error: the field the API names at the
        start of its detail (``server_group.policies[1]``), or None."""
        found = []
        for detail in self.details:
            named = _FIELD.match(detail)
            found.append((named.group(1) if named else None, detail))
        return found


class Client:
    """Calls the policy API at one microversion (by default its latest).

    :param session: a keystoneauth1 Session.
    :param version: the microversion every request asks for: a caller
        written against one answer shape names it, so that a newer API
        answers it in that shape.
    :param kwargs: Adapter arguments (region_name, interface,
        endpoint_override, additional_headers...).
    """

    def __init__(self, session, version: str = microversion.MAX_VERSION,
                 **kwargs) -> None:
        kwargs.setdefault('service_type', store_conf.SERVICE_TYPE)
        self.adapter = ks_adapter.Adapter(session, **kwargs)
        self.version = version

    def request(self, method: str, url: str,
                body: typing.Optional[dict] = None):
        """Send one request and return the decoded body (None for 204).

        :raises APIError: the API answered 4xx or 5xx.
        """
        kwargs = {'raise_exc': False, 'headers': {
            microversion.HEADER:
            f'{microversion.SERVICE_TYPE} {self.version}'}}
        if body is not None:
            kwargs['json'] = body
        resp = self.adapter.request(url, method, **kwargs)
        if resp.status_code >= 400:
            try:
                details = [e['detail'] for e in resp.json()['errors']]
            except (ValueError, KeyError, TypeError):
                details = [resp.text]
            raise APIError(method, url, resp.status_code, details)
        return resp.json() if resp.content else None
