"""Throwaway databases on the three backends the policy store supports.

PostgreSQL and MariaDB run on 127.0.0.1 on the project's machines
(PostgreSQL: trust auth; MariaDB: root without password). Elsewhere, point
NSP_TEST_POSTGRESQL_URL / NSP_TEST_MYSQL_URL at a server where the user may
create databases. An unreachable server fails the tests, loudly: start it
(pg_ctlcluster ... main start; start-stop-daemon ... mariadbd).
"""

import os
import uuid

import sqlalchemy as sa

SERVERS = {
    'postgresql': os.environ.get('NSP_TEST_POSTGRESQL_URL',
                                 'postgresql+psycopg2://postgres@127.0.0.1'),
    'mysql': os.environ.get('NSP_TEST_MYSQL_URL',
                            'mysql+pymysql://root@127.0.0.1'),
}
BACKENDS = ('sqlite', 'postgresql', 'mysql')


def create(backend, tmp_path):
    """Return (url, drop) for a new empty database."""
    if backend == 'sqlite':
        return f'sqlite:///{tmp_path}/store.db', lambda: None
    name = f'nsp_test_{uuid.uuid4().hex[:12]}'
    server = SERVERS[backend]
    admin_db = '/postgres' if backend == 'postgresql' else '/'
    admin = sa.create_engine(server + admin_db,
                             isolation_level='AUTOCOMMIT')
    suffix = ' CHARACTER SET utf8mb4' if backend == 'mysql' else ''
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE {name}{suffix}'))
    except sa.exc.OperationalError as exc:
        raise RuntimeError(f'{backend} at {server} is not reachable: '
                           f'{exc}') from exc
    url = f'{server}/{name}' + ('?charset=utf8mb4' if backend == 'mysql'
                                else '')

    def drop():
        with admin.connect() as conn:
            if backend == 'postgresql':
                conn.execute(sa.text(
                    'SELECT pg_terminate_backend(pid) FROM '
                    f"pg_stat_activity WHERE datname = '{name}'"))
            conn.execute(sa.text(f'DROP DATABASE {name}'))
        admin.dispose()
    return url, drop
