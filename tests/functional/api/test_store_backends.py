"""The policy store's unit tests again, on PostgreSQL and MariaDB.

tests/unit/db/test_store.py runs them on SQLite, which needs no server;
here the same functions run on the two database servers a cloud uses.
"""

import pytest

from nova_scoped_policies.db import api
from nova_scoped_policies.db import migration
from tests import db_backends
from tests.unit.db import test_store as unit

SERVERS = [b for b in db_backends.BACKENDS if b != 'sqlite']


@pytest.fixture(params=SERVERS)
def store(request, tmp_path):
    url, drop = db_backends.create(request.param, tmp_path)
    store = api.PolicyStore(url)
    migration.upgrade(store.engine)
    yield store
    store.engine.dispose()
    drop()


globals().update({name: getattr(unit, name) for name in dir(unit)
                  if name.startswith('test_')})

from tests.unit.db import test_repair_tasks as tasks_unit  # noqa: E402

globals().update({name: getattr(tasks_unit, name) for name in dir(tasks_unit)
                  if name.startswith('test_')})
test_two_processes_never_claim_one_server = \
    tasks_unit.two_processes_never_claim_one_server
