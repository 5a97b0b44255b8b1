"""The policy API client the commands use (keystoneauth1)."""

import typing

from keystoneauth1 import adapter as ks_adapter
from osc_lib import exceptions

from nova_scoped_policies.api import microversion
from nova_scoped_policies.conf import store as store_conf


class Client:
    """Calls the policy API at microversion 1.0.

    :param session: a keystoneauth1 Session.
    :param kwargs: Adapter arguments (region_name, interface,
        endpoint_override, additional_headers...).
    """

    def __init__(self, session, **kwargs) -> None:
        kwargs.setdefault('service_type', store_conf.SERVICE_TYPE)
        self.adapter = ks_adapter.Adapter(session, **kwargs)

    def request(self, method: str, url: str,
                body: typing.Optional[dict] = None):
        """Send one request and return the decoded body (None for 204).

        :raises osc_lib.exceptions.CommandError: the API's error detail.
        """
        kwargs = {'raise_exc': False, 'headers': {
            microversion.HEADER:
            f'{microversion.SERVICE_TYPE} {microversion.MAX_VERSION}'}}
        if body is not None:
            kwargs['json'] = body
        resp = self.adapter.request(url, method, **kwargs)
        if resp.status_code >= 400:
            try:
                detail = '; '.join(e['detail']
                                   for e in resp.json()['errors'])
            except (ValueError, KeyError, TypeError):
                detail = resp.text
            raise exceptions.CommandError(
                f'{method} {url}: {resp.status_code} {detail}')
        return resp.json() if resp.content else None
