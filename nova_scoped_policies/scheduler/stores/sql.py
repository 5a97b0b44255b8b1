"""``store_driver = sql``: read the policy store's database directly."""

import typing

from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc

from nova import context as nova_context
from nova import exception as nova_exc
from nova.scheduler.client import report
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import records
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.scheduler import stores

DB_ERRORS = (db_exc.DBError, sa_exc.SQLAlchemyError)
"""What an unreachable or failing database raises (oslo.db translates
most errors; a refused connection at engine start may come through as
SQLAlchemy's own)."""


class SqlStore(stores.PolicyStoreDriver):
    """Reads ``[policy_store] connection``.

    :param conf: the configuration (nova.conf inside nova-scheduler).
    """

    def __init__(self, conf) -> None:
        opts = conf.policy_store
        self.store = store_api.PolicyStore(
            opts.connection, connect_timeout=opts.connect_timeout,
            max_retries=opts.max_retries)

    def plan_member(self, plan_id: str, name: str):
        try:
            record = stack_db.StackStore(self.store).get(plan_id)
        except store_api.NotFound:
            return None
        except DB_ERRORS as exc:
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
        except DB_ERRORS as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')
        except nova_exc.AllocationDeleteFailed as exc:
            raise stores.StoreUnavailable(f'Placement: {exc}')

    def scopes(self) -> typing.List[records.ScopeRecord]:
        try:
            return self.store.list_scopes()
        except DB_ERRORS as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')

    def group(self, uuid: str) -> typing.Optional[records.GroupRecord]:
        try:
            return self.store.get_group(uuid)
        except store_api.NotFound:
            return None
        except DB_ERRORS as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')

    def groups(self) -> typing.List[records.GroupRecord]:
        try:
            return self.store.list_groups()
        except DB_ERRORS as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')
