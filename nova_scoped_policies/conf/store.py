"""Options of the policy store: ``[policy_store]`` and ``[policy_api]``.

The API service reads ``[policy_store]`` to open its database. The
scheduler plugins read ``[scoped_policies] store_driver`` and then either
``[policy_store]`` (driver ``sql``) or the keystoneauth1 options of
``[policy_api]`` (driver ``http``).
"""

from oslo_config import cfg

from nova_scoped_policies.conf import groups
from nova_scoped_policies.conf import ksa

STORE_GROUP = 'policy_store'
API_GROUP = 'policy_api'
SERVICE_TYPE = 'scoped-policies'

store_group = cfg.OptGroup(
    STORE_GROUP,
    title='Policy store database',
    help="""
The database of policy scopes and scoped server group policies. Its own
group, not ``[database]``: the scheduler reads it from nova.conf, where
``[database]`` is nova's.
""")

store_opts = [
    cfg.StrOpt(
        'connection',
        default='sqlite:////var/lib/nova-scoped-policies/policy-store.sqlite',
        secret=True,
        help="""
SQLAlchemy URL of the policy store.

SQLite suits a single API process and the scheduler on the same machine.
Use PostgreSQL (``postgresql+psycopg2://user:pw@host/db``) or MariaDB/MySQL
(``mysql+pymysql://user:pw@host/db``) when the API runs in several processes
or the scheduler reads the store (``store_driver = sql``) from other hosts.
Run ``nova-scoped-policies-manage db sync`` after changing it.
"""),
    cfg.IntOpt(
        'connect_timeout',
        default=5,
        min=1,
        help="""
Seconds to wait for the policy store's database server to accept a
connection (PostgreSQL and MariaDB/MySQL).

With ``store_driver = sql`` every group boot may wait this long for an
unreachable store before the scheduler answers from what it read last (see
``[scoped_policies] store_retry_interval``); keep it to a few seconds.
"""),
    cfg.IntOpt(
        'max_retries',
        default=1,
        min=1,
        help="""
Connection attempts before the policy store counts as unreachable, one
second apart. oslo.db's own default (10 attempts 10 s apart) would hold a
group boot for 100 s; the scheduler's circuit breaker retries later anyway.
"""),
]

api_group = cfg.OptGroup(
    API_GROUP,
    title='Policy API client',
    help="""
How the scheduler's ``http`` store driver reaches the policy API service:
the usual keystoneauth1 session, auth and adapter options. The service type
is ``scoped-policies``.
""")


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register both groups on ``conf`` (idempotent)."""
    groups.register(conf, store_group, store_opts)
    groups.register(conf, api_group)
    ksa.register_ks_opts(conf, API_GROUP)
    conf.set_default('service_type', SERVICE_TYPE, group=API_GROUP)


def list_opts():
    return {store_group: store_opts, api_group: ksa.list_ks_opts()}
