"""What the service asks Nova: the members of a server group, and the
group a server was booted into; for an export (:mod:`.export`), every
server, server group and host aggregate, page by page.

Nova knows the servers booted into a group; the policy store knows those
added with ``add_instance`` and those of Nova's taken out of the group's
scoped policies with ``remove_instance``. Audits cover both.
"""

import typing

from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg
from nova_scoped_policies.conf import api as api_conf
from nova_scoped_policies.conf import ksa
from nova_scoped_policies import errors

COMPUTE_VERSION = '2.64'
"""``policy`` and ``rules`` of server groups; any later one will do."""
SERVER_GROUPS_VERSION = '2.71'
"""A server's ``server_groups`` (the group it was booted into)."""
PAGE = 1000
"""Servers or server groups per page of a listing (Nova's
``[api]max_limit`` defaults to 1000: a smaller page of it still goes on
with its last server as the marker)."""


class NovaGroups:
    """Reads server groups from the compute API.

    :param adapter: a keystoneauth1 Adapter for service type ``compute``.
    """

    def __init__(self, adapter) -> None:
        self.adapter = adapter

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts
                  ) -> typing.Optional['NovaGroups']:
        """A client from ``[nova]``, or None when ``auth_type`` is unset.
        """
        if not conf[api_conf.NOVA_GROUP].auth_type:
            return None
        return cls(ksa.load_adapter(conf, api_conf.NOVA_GROUP, 'compute',
                                    api_conf.timeouts(conf)))

    def members(self, uuid: str) -> typing.List[str]:
        """The group's members as Nova lists them; none if Nova does not
        know the group.

        :raises nova_scoped_policies.errors.Unavailable: Nova failed.
        """
        group = self.group(uuid)
        return list(group['members']) if group else []

    def _get(self, path: str, what: str, version: str = COMPUTE_VERSION
             ) -> typing.Optional[dict]:
        try:
            resp = self.adapter.get(
                path, raise_exc=False,
                headers={'OpenStack-API-Version': f'compute {version}'})
        except ks_exc.ClientException as exc:
            raise errors.Unavailable(
                f'cannot read {what} from Nova: {exc}') from exc
        if resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise errors.Unavailable(
                f'cannot read {what} from Nova: {resp.status_code}')
        return resp.json()

    def aggregate_hosts(self) -> typing.Dict[str, typing.FrozenSet[str]]:
        """Every host aggregate's hosts, in one call: aggregate uuid ->
        compute host names.

        :raises nova_scoped_policies.errors.Unavailable: Nova failed.
        """
        found = self._get('/os-aggregates', 'the host aggregates') or {}
        return {a['uuid']: frozenset(a.get('hosts') or ())
                for a in found.get('aggregates', ())}

    def aggregates(self) -> typing.List[dict]:
        """Every host aggregate (``uuid``, ``name``, ``hosts``,
        ``metadata``), in one call (Nova does not page them).

        :raises nova_scoped_policies.errors.Unavailable: Nova failed.
        """
        found = self._get('/os-aggregates', 'the host aggregates') or {}
        return list(found.get('aggregates', ()))

    def all_servers(self, page: int = PAGE) -> typing.Iterator[dict]:
        """Every server of every project (``id``, ``name``,
        ``tenant_id``...), ``page`` at a time (``limit`` and ``marker``).

        :raises nova_scoped_policies.errors.Unavailable: Nova failed.
        """
        marker = None
        while True:
            query = f'all_tenants=1&limit={page}' + (
                f'&marker={marker}' if marker else '')
            body = self._get(f'/servers/detail?{query}', 'the servers') or {}
            found = body.get('servers', [])
            yield from found
            # Nova links the next page while a page comes full
            if not found or not any(link.get('rel') == 'next' for link in
                                    body.get('servers_links', ())):
                return
            marker = found[-1]['id']

    def all_groups(self, page: int = PAGE) -> typing.Iterator[dict]:
        """Every server group of every project (``id``, ``name``,
        ``policy``, ``rules``, ``members``, ``project_id``), ``page`` at a
        time (``limit`` and ``offset``).

        :raises nova_scoped_policies.errors.Unavailable: Nova failed.
        """
        offset = 0
        while True:
            found = (self._get(
                f'/os-server-groups?all_projects=true&limit={page}'
                f'&offset={offset}', 'the server groups') or {}).get(
                    'server_groups', [])
            yield from found
            # Nova clips limit to its [api]max_limit: go on to an empty
            # page
            if not found:
                return
            offset += len(found)

    def server_project(self, uuid: str) -> typing.Optional[str]:
        """The project of a server, or None when Nova has no such server.

        :raises nova_scoped_policies.errors.Unavailable: Nova failed.
        """
        found = self._get(f'/servers/{uuid}', f'server {uuid}')
        return found['server'].get('tenant_id') if found else None

    def server_group(self, uuid: str) -> typing.Optional[str]:
        """The server group Nova booted a server into, or None (none, or
        Nova has no such server).

        :raises nova_scoped_policies.errors.Unavailable: Nova failed.
        """
        found = self._get(f'/servers/{uuid}', f'server {uuid}',
                          version=SERVER_GROUPS_VERSION)
        groups = found['server'].get('server_groups') if found else None
        return groups[0] if groups else None

    def group(self, uuid: str) -> typing.Optional[dict]:
        """Nova's server group (``project_id``, ``members``...), or None.

        :raises nova_scoped_policies.errors.Unavailable: Nova failed.
        """
        try:
            resp = self.adapter.get(
                f'/os-server-groups/{uuid}', raise_exc=False,
                headers={'OpenStack-API-Version':
                         f'compute {COMPUTE_VERSION}'})
        except ks_exc.ClientException as exc:
            raise errors.Unavailable(
                f'cannot read server group {uuid} from Nova: {exc}') from exc
        if resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise errors.Unavailable(
                f'cannot read server group {uuid} from Nova: '
                f'{resp.status_code} {resp.text}')
        return resp.json()['server_group']
