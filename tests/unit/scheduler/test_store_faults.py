"""An unreachable policy store costs a boot seconds, not oslo.db's 100."""

import time

from oslo_config import cfg
import pytest

from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.scheduler import stores
from nova_scoped_policies.scheduler.stores import sql


@pytest.mark.parametrize('url', [
    'postgresql+psycopg2://nobody@127.0.0.1:1/store',
    'mysql+pymysql://nobody@127.0.0.1:1/store'])
def test_an_unreachable_database_fails_after_one_attempt(url, monkeypatch):
    conf = cfg.ConfigOpts()
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override('connection', url, group='policy_store')
    attempts = []
    from sqlalchemy.engine import base as sa_base
    real = sa_base.Engine.connect

    def counted(engine, *args, **kwargs):
        attempts.append(1)
        return real(engine, *args, **kwargs)
    monkeypatch.setattr(sa_base.Engine, 'connect', counted)
    driver = sql.SqlStore(conf)
    started = time.monotonic()
    with pytest.raises(stores.StoreUnavailable, match='policy store'):
        driver.group('00000000-0000-4000-8000-000000000001')
    # one connection attempt ([policy_store] max_retries = 1), not ten
    assert len(attempts) == 1
    print(f'{url.split(":")[0]}: unreachable after '
          f'{time.monotonic() - started:.1f} s')
