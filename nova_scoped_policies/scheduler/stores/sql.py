"""``store_driver = sql``: read the policy store's database directly."""

import typing

from oslo_db import exception as db_exc

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.scheduler import stores


class SqlStore(stores.PolicyStoreDriver):
    """Reads ``[policy_store] connection``.

    :param conf: the configuration (nova.conf inside nova-scheduler).
    """

    def __init__(self, conf) -> None:
        self.store = store_api.PolicyStore(conf.policy_store.connection)

    def scopes(self) -> typing.List[dict]:
        try:
            return self.store.list_scopes()
        except db_exc.DBError as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')

    def group(self, uuid: str) -> typing.Optional[stores.StoredGroup]:
        try:
            return _stored(self.store.get_group(uuid))
        except store_api.NotFound:
            return None
        except db_exc.DBError as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')

    def groups(self) -> typing.List[stores.StoredGroup]:
        try:
            return [_stored(r) for r in self.store.list_groups()]
        except db_exc.DBError as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')


def _stored(record: dict) -> stores.StoredGroup:
    return stores.StoredGroup(record['uuid'], record['project_id'],
                              record['document'], tuple(record['members']))
