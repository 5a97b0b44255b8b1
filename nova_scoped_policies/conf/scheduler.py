"""Options of the ``[scoped_policies]`` group read by the scheduler plugins."""

from oslo_config import cfg

GROUP_NAME = 'scoped_policies'
scoped_policies_group = cfg.OptGroup(
    GROUP_NAME,
    title='Scoped server group policies',
    help="""
Options of the nova-scoped-policies scheduler filters and weighers. They are
read by nova-scheduler from nova.conf; see the admin guide "Enabling the
scheduler plugins".
""")

ALLOW_HINT = 'allow_policy_hint'
SOFT_AFFINITY_MULTIPLIER = 'soft_affinity_weight_multiplier'
SOFT_ANTI_AFFINITY_MULTIPLIER = 'soft_anti_affinity_weight_multiplier'

scheduler_opts = [
    cfg.BoolOpt(
        ALLOW_HINT,
        default=True,
        help="""
Accept scoped policy documents from tenants in the ``scoped_policies``
scheduler hint.

The hint adds scoped policies (``anti-affinity:rack``, LLMN...) to the server
group named by the ``group`` hint, for the boot that carries it. Set this to
False to enforce only the policies of Nova's own server groups, for example
while the deployer has not yet defined any scope, or to stop tenants from
asking for placements the capacity plan does not allow for.
"""),
    cfg.FloatOpt(
        SOFT_AFFINITY_MULTIPLIER,
        default=1.0,
        min=0.0,
        help="""
Multiplier of the ScopedSoftAffinityWeigher.

The weigher prefers hosts whose domain (rack, switch...) already holds members
of the group, for every ``soft-affinity:<scope>`` policy. Raise it when other
weighers (RAM, CPU) outweigh the packing tenants ask for; lower it to let
capacity decide more often. 0.0 turns the weigher off. Aggregate metadata
``scoped_soft_affinity_weight_multiplier`` overrides the value for the hosts
of that aggregate (the smallest value wins when a host is in several).

Related options:

* ``[filter_scheduler] weight_classes`` must include
  ``nova_scoped_policies.scheduler.weights.all_weighers``.
"""),
    cfg.FloatOpt(
        SOFT_ANTI_AFFINITY_MULTIPLIER,
        default=1.0,
        min=0.0,
        help="""
Multiplier of the ScopedSoftAntiAffinityWeigher.

The weigher prefers hosts whose domain holds the fewest members of the group,
for every ``soft-anti-affinity:<scope>`` policy. Raise it when groups are not
spread evenly enough because other weighers dominate; 0.0 turns it off.
Aggregate metadata ``scoped_soft_anti_affinity_weight_multiplier`` overrides
the value for the hosts of that aggregate (the smallest value wins).

Related options:

* ``[filter_scheduler] weight_classes`` must include
  ``nova_scoped_policies.scheduler.weights.all_weighers``.
"""),
    cfg.IntOpt(
        'aggregate_refresh_interval',
        default=30,
        min=0,
        help="""
Seconds the scheduler keeps its copy of the host aggregates that define scopes
(``policy_scope`` metadata) before reading them again from the API database.

Scope changes (a new rack aggregate, a host moved between racks) reach the
scheduler within this delay. Lower it while reorganising scopes; raise it in
very large clouds where the aggregate list is big. 0 reads the aggregates for
every scheduling request of a server group.
"""),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register the group and its options on ``conf`` (idempotent)."""
    conf.register_group(scoped_policies_group)
    conf.register_opts(scheduler_opts, group=scoped_policies_group)


def list_opts():
    return {scoped_policies_group: scheduler_opts}
