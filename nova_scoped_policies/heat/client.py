"""Heat's client plugin for the policy service (service type
``scoped-policies``), registered under ``heat.clients`` as
``scoped_policies``.

Calls go through the stack owner's keystoneauth1 session, to the endpoint
of the catalog. ``[clients_scoped_policies] endpoint_override`` names the
endpoint instead; ``noauth`` (development and tests against a service in
``noauth2`` mode only) sends the caller's project and roles as headers.
"""

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from oslo_config import cfg

from heat.engine.clients import client_plugin

SERVICE_TYPE = 'scoped-policies'
VERSION = '1.1'
GROUP = 'clients_scoped_policies'
OPTS = [
    cfg.StrOpt('endpoint_type',
               help='Catalog interface of the policy service (default: '
               'Heat\'s [clients] endpoint_type).'),
    cfg.StrOpt('endpoint_override',
               help='URL of the policy service; default: the catalog\'s '
               'scoped-policies endpoint.'),
    cfg.BoolOpt('noauth', default=False,
                help='Send X-Project-Id and X-Roles instead of a token, '
                'for a policy service in noauth2 mode (development and '
                'tests only).'),
]
cfg.CONF.register_opts(OPTS, group=GROUP)


class ScopedPoliciesClientPlugin(client_plugin.ClientPlugin):
    """A keystoneauth1 Adapter speaking policy API microversion 1.1."""

    service_types = [SERVICE_TYPE]

    def _create(self, version=None):
        conf = cfg.CONF[GROUP]
        headers = {'OpenStack-API-Version': f'{SERVICE_TYPE} {VERSION}'}
        if conf.noauth:
            session = ks_session.Session()
            headers.update({'X-Project-Id': self.context.project_id,
                            'X-User-Id': self.context.user_id or '',
                            'X-Roles': ','.join(self.context.roles or [])})
        else:
            session = self.context.keystone_session
        return ks_adapter.Adapter(
            session, service_type=SERVICE_TYPE,
            interface=self._get_client_option('scoped_policies',
                                              'endpoint_type'),
            region_name=self._get_region_name(),
            endpoint_override=conf.endpoint_override,
            additional_headers=headers)

    def does_endpoint_exist(self, service_type, service_name):
        if cfg.CONF[GROUP].endpoint_override:
            return True
        return super().does_endpoint_exist(service_type, service_name)

    def is_not_found(self, ex):
        return getattr(ex, 'status_code', None) == 404


class APIError(Exception):
    """The policy service answered an error; the message is its detail."""

    def __init__(self, status_code: int, detail: str) -> None:
        self.status_code = status_code
        super().__init__(detail)


def call(adapter, method: str, url: str, body=None) -> dict:
    """One request; the decoded body, or :class:`APIError`."""
    resp = adapter.request(url, method, json=body, raise_exc=False)
    if resp.status_code >= 400:
        try:
            detail = '; '.join(e['detail'] for e in resp.json()['errors'])
        except (ValueError, KeyError, TypeError):
            detail = resp.text[:200]
        raise APIError(resp.status_code, f'{method} {url}: '
                       f'{resp.status_code} {detail}')
    return resp.json() if resp.content else {}
