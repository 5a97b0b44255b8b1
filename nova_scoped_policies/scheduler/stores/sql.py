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


def _release_through_nova(consumer: str) -> None:
    """Delete a hold consumer's allocations with nova's own Placement
    client of this scheduler.

    :raises nova.exception.AllocationDeleteFailed: Placement refused.
    """
    report.report_client_singleton().delete_allocation_for_instance(
        nova_context.get_admin_context(), consumer,
        consumer_type='stack hold', force=True)


DB_ERRORS = (db_exc.DBError, sa_exc.SQLAlchemyError)
"""What an unreachable or failing database raises (oslo.db translates
most errors; a refused connection at engine start may come through as
SQLAlchemy's own)."""


class SqlStore(stores.PolicyStoreDriver):
    """Reads ``[policy_store] connection``.

    :param conf: the configuration (nova.conf inside nova-scheduler).
    :param release: gives a hold consumer's allocations back in Placement
        (default: through nova's Placement client of this scheduler).
    """

    def __init__(self, conf, release=None) -> None:
        opts = conf.policy_store
        self.store = store_api.PolicyStore(
            opts.connection, connect_timeout=opts.connect_timeout,
            max_retries=opts.max_retries)
        self._release = release or _release_through_nova

    def stack_plan(self, plan_id: str):
        try:
            record = stack_db.StackStore(self.store).get(plan_id)
        except store_api.NotFound:
            return None
        except DB_ERRORS as exc:
            raise stores.StoreUnavailable(f'policy store database: {exc}')
        return stores.StackPlan(
            record.id, record.project_id, record.document,
            {name: stores.PlanServer(s.host, s.state, s.instance_uuid)
             for name, s in record.servers.items()})

    def boot_member(self, plan_id: str, name: str,
                    instance_uuid: typing.Optional[str] = None) -> None:
        store = stack_db.StackStore(self.store)
        try:
            record = store.get(plan_id)
            consumer = record.held.get(name)
            if consumer:
                self._release(consumer)
            store.boot(plan_id, name, instance_uuid)
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
