"""``store_driver = sql``: read the policy store's database directly."""

import typing

from oslo_db import exception as db_exc

from nova import context as nova_context
from nova import exception as nova_exc
from nova.scheduler.client import report
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.scheduler import stores


class SqlStore(stores.PolicyStoreDriver):
    """Reads ``[policy_store] connection``.

    :param conf: the configuration (nova.conf inside nova-scheduler).
    """

    def __init__(self, conf) -> None:
        self.store = store_api.PolicyStore(conf.policy_store.connection)

    def plan_member(self, plan_id: str, name: str):
        try:
            record = stack_db.StackStore(self.store).get(plan_id)
        except store_api.NotFound:
            return None
        except db_exc.DBError as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')
        server = record.servers.get(name)
        if server is None:
            return None
        return stores.PlanMember(server.host, record.project_id,
                                 server.state)

    def boot_member(self, plan_id: str, name: str) -> None:
        store = stack_db.StackStore(self.store)
        try:
            record = store.get(plan_id)
            consumer = record.held.get(name)
            if consumer:
                # through nova's own Placement client of this scheduler
                report.report_client_singleton(
                ).delete_allocation_for_instance(
                    nova_context.get_admin_context(), consumer,
                    consumer_type='stack hold', force=True)
            store.update(plan_id, servers=[name], state=stack_db.BOOTED)
        except store_api.NotFound:
            return
        except db_exc.DBError as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')
        except nova_exc.AllocationDeleteFailed as exc:
            raise stores.StoreUnavailable(f'Placement: {exc}')

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
