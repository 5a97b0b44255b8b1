"""Tempest options of the plugin: ``[service_available] scoped_policies``
and the ``[scoped_policies]`` group.

Registered by :class:`..plugin.ScopedPoliciesTempestPlugin` on Tempest's
configuration; the tests read them as ``CONF.scoped_policies.<option>``.
"""

from oslo_config import cfg

service_option = cfg.BoolOpt(
    'scoped_policies',
    default=False,
    help="""
Whether the cloud runs the nova-scoped-policies policy API (service type
``scoped-policies`` in the catalog) and nova-scheduler with its filters.

False (the default): every test of the plugin is skipped, saying so.
""")

group = cfg.OptGroup(
    name='scoped_policies',
    title='nova-scoped-policies options',
    help="""
What the cloud under test offers of nova-scoped-policies: the policy API's
endpoint and microversions, the scope the tests place servers by, and the
parts that may be switched off.
""")

opts = [
    cfg.StrOpt(
        'catalog_type',
        default='scoped-policies',
        help="""
Service type of the policy API in the Keystone catalog.
"""),
    cfg.StrOpt(
        'endpoint_type',
        default='publicURL',
        choices=['public', 'admin', 'internal',
                 'publicURL', 'adminURL', 'internalURL'],
        help="""
The endpoint type of the policy API in the catalog.
"""),
    cfg.StrOpt(
        'region',
        default='',
        help="""
The region of the policy API's endpoint; empty: ``[identity] region``.
"""),
    cfg.StrOpt(
        'min_microversion',
        default='1.0',
        help="""
The lowest microversion of the policy API the tests may ask for.

Tests written for a range of microversions outside
``min_microversion``-``max_microversion`` are skipped, saying which.

Related options: ``max_microversion``.
"""),
    cfg.StrOpt(
        'max_microversion',
        default='latest',
        help="""
The highest microversion of the policy API the tests may ask for:
``latest``, or the highest your deployment serves (``GET /`` answers it),
for example ``1.3`` for a service without repair tasks and export.

Related options: ``min_microversion``.
"""),
    cfg.StrOpt(
        'scope',
        default='rack',
        help="""
The policy scope the tests place servers by (``anti-affinity:<scope>``).

It must be a scope of the policy API (``openstack scoped policy scope
list``) whose domains are host aggregates of the cloud's compute hosts.
Scenario tests that need several domains of it are skipped, saying how
many the cloud has, when it has fewer.
"""),
    cfg.BoolOpt(
        'stacks',
        default=True,
        help="""
Whether stacks (joint decisions held in Placement, microversion 1.1) are
enabled: the policy API needs OR-Tools (the ``joint`` extra). False skips
the stack tests.
"""),
    cfg.BoolOpt(
        'repairs',
        default=True,
        help="""
Whether repairs are enabled: plans need OR-Tools, and applying one needs
the policy API's ``[nova]`` credentials (it live-migrates servers). False
skips the repair and repair task tests.

Related options: ``[compute-feature-enabled] live_migration``: the tests
that apply a repair are skipped without it.
"""),
    cfg.BoolOpt(
        'secure_rbac',
        default=False,
        help="""
Whether the policy API enforces the reader and member personas of Secure
RBAC (a reader reads, only a member writes). False skips the persona
tests, saying so.
"""),
    cfg.IntOpt(
        'store_cache_ttl',
        default=10,
        min=0,
        help="""
Seconds a policy change takes to reach nova-scheduler: its nova.conf
``[scoped_policies] store_cache_ttl``. Tests that change a group's policy
and then boot or move one of its servers wait this long first.
"""),
    cfg.IntOpt(
        'build_timeout',
        default=0,
        min=0,
        help="""
Seconds to wait for a server, a migration or a repair task; 0:
``[compute] build_timeout``.
"""),
    cfg.IntOpt(
        'build_interval',
        default=0,
        min=0,
        help="""
Seconds between two looks at a server, a migration or a repair task; 0:
``[compute] build_interval``.
"""),
]


def list_opts():
    """(group, options) pairs, for Tempest's sample configuration."""
    return [('service_available', [service_option]), (group.name, opts)]
