"""``store_driver = http``: ask the policy API through keystoneauth1.

The scheduler's credentials (``[policy_api]``) must carry the admin role:
the driver needs real aggregate uuids and every project's groups.
"""

import typing

from keystoneauth1 import exceptions as ks_exc

from nova_scoped_policies.api import microversion
from nova_scoped_policies.conf import ksa
from nova_scoped_policies.conf import store as store_conf
from nova_scoped_policies import policy
from nova_scoped_policies.scheduler import stores

STACKS_VERSION = '1.1'


class HttpStore(stores.PolicyStoreDriver):
    """Reads the policy API at microversion 1.0.

    :param conf: the configuration with ``[policy_api]``.
    :param adapter: a keystoneauth1 Adapter (default: from ``conf``).
    """

    def __init__(self, conf, adapter=None) -> None:
        self.adapter = adapter or ksa.load_adapter(
            conf, store_conf.API_GROUP, store_conf.SERVICE_TYPE)

    def _get(self, url: str, missing_ok: bool = False):
        try:
            resp = self.adapter.get(
                url, raise_exc=False, headers={
                    microversion.HEADER:
                    f'{microversion.SERVICE_TYPE} {microversion.MIN_VERSION}'
                })
        except ks_exc.ClientException as exc:
            raise stores.StoreUnavailable(f'policy API: {exc}')
        if missing_ok and resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise stores.StoreUnavailable(
                f'policy API: GET {url}: {resp.status_code} {resp.text}')
        return resp.json()

    def scopes(self) -> typing.List[dict]:
        scopes = self._get('/os-policy-scopes')['policy_scopes']
        for scope in scopes:
            if 'obfuscate_namespace_uuid' not in scope:
                raise stores.StoreUnavailable(
                    'policy API: the [policy_api] credentials do not see '
                    'real identifiers; they need the admin role')
        return scopes

    def group(self, uuid: str) -> typing.Optional[stores.StoredGroup]:
        body = self._get(f'/os-server-groups/{uuid}', missing_ok=True)
        return None if body is None else _stored(body['server_group'])

    def _stacks(self, method: str, url: str, body=None):
        try:
            resp = self.adapter.request(
                url, method, raise_exc=False, json=body, headers={
                    microversion.HEADER:
                    f'{microversion.SERVICE_TYPE} {STACKS_VERSION}'})
        except ks_exc.ClientException as exc:
            raise stores.StoreUnavailable(f'policy API: {exc}')
        if resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise stores.StoreUnavailable(
                f'policy API: {method} {url}: {resp.status_code}')
        return resp.json()['stack']

    def plan_member(self, plan_id: str, name: str):
        stack = self._stacks('GET', f'/stacks/{plan_id}')
        server = (stack or {}).get('servers', {}).get(name)
        if server is None:
            return None
        return stores.PlanMember(server['host'], stack['project_id'],
                                 server['state'])

    def boot_member(self, plan_id: str, name: str) -> None:
        self._stacks('POST', f'/stacks/{plan_id}/action',
                     {'boot_member': {'name': name}})

    def groups(self) -> typing.List[stores.StoredGroup]:
        return [_stored(g) for g in self._get(
            '/os-server-groups?all_projects=true')['server_groups']]


def _stored(group: dict) -> stores.StoredGroup:
    try:
        document = policy.parse_document(
            {'policies': group['policies'], 'rules': group['rules']})
    except policy.PolicyError as exc:
        raise stores.StoreUnavailable(
            f'policy API: group {group["id"]}: {exc}')
    return stores.StoredGroup(group['id'], group['project_id'], document,
                              tuple(group['members']))
