"""Options of the ``[scoped_policies]`` group read by the scheduler plugins."""

from oslo_config import cfg

from nova_scoped_policies.conf import groups

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
ENABLE_FORBIDDEN_AGGREGATES = 'enable_forbidden_aggregates_filter'
ENABLE_SCOPED_POLICY_QUERY = 'enable_scoped_policy_query_filter'
ENABLE_SCOPED_PLAN = 'enable_scoped_plan_filter'
STORE_DRIVER = 'store_driver'
COORDINATION_URL = 'coordination_backend_url'
NOVA_SEAM = 'nova_seam'
AGGREGATE_NOTIFICATIONS = 'aggregate_notifications'
COORDINATION_LOCK_TIMEOUT = 'coordination_lock_timeout'
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
        default=None,
        min=0.0,
        sample_default='<[filter_scheduler] soft_affinity_weight_multiplier>',
        help="""
Multiplier of the ScopedSoftAffinityWeigher.

The weigher prefers hosts whose domain (rack, switch...) already holds members
of the group, for every ``soft-affinity:<scope>`` policy. Raise it when other
weighers (RAM, CPU) outweigh the packing tenants ask for; lower it to let
capacity decide more often. 0.0 turns the weigher off.

Unset (the default), nova's own settings apply, as they did for nova's
ServerGroupSoftAffinityWeigher: aggregate metadata
``soft_affinity_weight_multiplier``, then ``[filter_scheduler]
soft_affinity_weight_multiplier`` (1.0 by default). Aggregate metadata
``scoped_soft_affinity_weight_multiplier`` overrides every option for the
hosts of that aggregate (the smallest value wins when a host is in several).

Related options:

* ``[filter_scheduler] weight_classes`` must include
  ``nova_scoped_policies.scheduler.weights.all_weighers``.
* ``[filter_scheduler] soft_affinity_weight_multiplier``: used while this
  option is unset.
"""),
    cfg.FloatOpt(
        SOFT_ANTI_AFFINITY_MULTIPLIER,
        default=None,
        min=0.0,
        sample_default=(
            '<[filter_scheduler] soft_anti_affinity_weight_multiplier>'),
        help="""
Multiplier of the ScopedSoftAntiAffinityWeigher.

The weigher prefers hosts whose domain holds the fewest members of the group,
for every ``soft-anti-affinity:<scope>`` policy. Raise it when groups are not
spread evenly enough because other weighers dominate; 0.0 turns it off.

Unset (the default), nova's own settings apply, as they did for nova's
ServerGroupSoftAntiAffinityWeigher: aggregate metadata
``soft_anti_affinity_weight_multiplier``, then ``[filter_scheduler]
soft_anti_affinity_weight_multiplier`` (1.0 by default). Aggregate metadata
``scoped_soft_anti_affinity_weight_multiplier`` overrides every option for the
hosts of that aggregate (the smallest value wins).

Related options:

* ``[filter_scheduler] weight_classes`` must include
  ``nova_scoped_policies.scheduler.weights.all_weighers``.
* ``[filter_scheduler] soft_anti_affinity_weight_multiplier``: used while
  this option is unset.
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

With ``aggregate_notifications`` (the default) nova's versioned aggregate
notifications make the copy stale at once; this interval is then only the
fallback for a lost notification. Without a listener, the forbidden-aggregates
filter does not use the copy (it reads the API database for every request),
and the host filters compare the candidates' aggregates in nova-scheduler's
own view with it, reloading it when it is behind.
"""),
    cfg.BoolOpt(
        NOVA_SEAM,
        default=True,
        help="""
Install the nova seam when nova-scheduler starts.

nova offers scheduler plugins host filters and weighers only. The rest of
what nova-scoped-policies needs is installed by the seam, once, when
nova-scheduler builds its enabled filters and weighers (in
``SchedulerManager.__init__``), after checking that nova's internals are those
of the release it was written for:

* the request filters enabled below are appended to nova's request-filter
  list;
* ``SchedulerManager.select_destinations`` is wrapped: a request for a server
  group with hard scoped policies (or a stack server) holds the group's lock
  (``coordination_backend_url``) until nova has claimed its hosts, gets no
  alternate hosts (a failed build goes to ERROR rather than to an unchecked
  alternate), and a NoValidHost says which policy left no host;
* an oslo.messaging listener of nova's versioned ``aggregate.*``
  notifications (``aggregate_notifications``).

Listing the filter classes (``[filter_scheduler] available_filters``) changes
nothing in nova. ``nova-scoped-policies-status upgrade check`` reports what is
installed. With this option false, or on a nova whose internals differ,
nothing of nova is patched: our filters and weighers still run, and boots into
groups with hard scoped policies fail closed (no valid host, with the reason
in the scheduler's log), since concurrent boots could break them.

Related options:

* ``aggregate_notifications``
* ``coordination_backend_url``
"""),
    cfg.BoolOpt(
        AGGREGATE_NOTIFICATIONS,
        default=True,
        help="""
Keep the scheduler's copy of the host aggregates fresh from nova's versioned
notifications.

Each nova-scheduler process listens on a RabbitMQ queue of its own,
``nova-scoped-policies-aggregates.<host>.<pid>``, bound to nova's
``[notifications] versioned_notifications_topics``, and reloads the aggregates
at its next request after an ``aggregate.add_host``, ``remove_host``,
``update_metadata``, ``update_prop`` or ``delete`` notification. nova must
send versioned notifications: ``[notifications] notification_format = both``
(or ``versioned``) and ``[oslo_messaging_notifications] driver = messagingv2``
(the drivers that send over the transport); otherwise a warning is logged and
changes arrive within
``aggregate_refresh_interval``. Every versioned notification reaches every
scheduler's queue (all but aggregate events are dropped); set this to False
where that traffic matters more than freshness (the forbidden-aggregates filter
then reads the API database for every request). A scheduler that stops cleanly
deletes its queue; a RabbitMQ policy expires those of schedulers that die
(doc/source/admin/schedulers.rst).

Related options:

* ``nova_seam`` (the listener is part of it)
* ``aggregate_refresh_interval``
"""),

    cfg.BoolOpt(
        ENABLE_SCOPED_PLAN,
        default=True,
        help="""
Boot the servers of a stack decision on their decided hosts.

A server booted with the scheduler hints ``scoped_plan=<decision id>`` and
``scoped_plan_member=<server name>`` (``POST /stacks`` of the policy service
returns them) is pinned to its decided host, and the capacity held for it in
Placement is given back just before nova claims it; the host filters still
check every policy. Moves are never pinned. Without those hints the filter
does nothing; set this to False to ignore them.
"""),
    cfg.BoolOpt(
        ENABLE_FORBIDDEN_AGGREGATES,
        default=False,
        help="""
Keep requests out of aggregates reserved by traits (forbidden-aggregates).

An aggregate whose metadata holds ``trait:<TRAIT>=required`` then only takes
requests whose flavor or image require every such trait; Placement is asked
for ``member_of=!in:<the other aggregates>``. Enable it to reserve hosts for
licensed or special images (e.g. ``trait:CUSTOM_WINDOWS_LICENSED=required``).
It does the work of Nova's ``[scheduler] enable_isolated_aggregate_filtering``;
enable one of the two, not both. While an aggregate listener of the
scheduling process keeps the scheduler's copy of the aggregates fresh
(``aggregate_notifications``), it reads that copy, one notification's delivery
behind at most; otherwise it reads the aggregates' ``trait:`` metadata from the
API database for every request, as Nova's does. Isolation never waits for
``aggregate_refresh_interval``.

Related options:

* ``nova_seam`` must be true: the seam installs the request filter when
  nova-scheduler starts.
* ``aggregate_refresh_interval``
"""),
    cfg.BoolOpt(
        ENABLE_SCOPED_POLICY_QUERY,
        default=False,
        help="""
Push hard scoped policies into the Placement query.

For a boot into a group, Nova asks Placement for every host of the cloud.
With this option the request already names the domains that can pass:
``member_of=in:<the rack>`` after the first member of an ``affinity:rack``
group, ``member_of=!in:<full racks>`` for ``anti-affinity:rack``, targeted
domains, and ``min_domains`` exclusions. Host-scope policies stay with the
host filters, which still check everything. Enable it in large clouds where
group boots pull thousands of hosts.

Related options:

* ``nova_seam`` must be true: the seam installs the request filter when
  nova-scheduler starts.
* ``max_query_aggregates``
"""),
    cfg.IntOpt(
        'max_query_aggregates',
        default=200,
        min=1,
        help="""
Most aggregate uuids the scoped-policy query filter adds to the Placement
query for one constraint.

Every uuid makes the ``GET /allocation_candidates`` URL 37 bytes longer, and
web servers in front of Placement limit the request line (often 8 KiB).
When the filter would add more, it adds none and leaves the work to the host
filters. Raise it only if Placement's web server accepts longer URLs. The
forbidden-aggregates filter is not capped: no host filter would do its work,
so it adds every aggregate reserved by a trait the request lacks, as nova's
``isolate_aggregates`` does.
"""),
    cfg.StrOpt(
        STORE_DRIVER,
        default='',
        help="""
Where the scheduler plugins read policy scopes and the scoped policies of
server groups saved through the policy API.

Empty (the default): no store; scopes come from aggregate metadata
(``policy_scope``) and policies from Nova's groups and the
``scoped_policies`` hint. ``sql``: read the store's database directly
(``[policy_store] connection``); the fastest, for schedulers that can reach
that database. ``http``: ask the policy API service through keystoneauth1
(``[policy_api]``); for schedulers that may not reach the database. Other
names are looked up in the ``nova_scoped_policies.scheduler.stores``
entry point namespace.

When the store cannot be reached, boots into a group whose stored
policies are hard fail with a reason that says so (fail closed); soft
stored policies are skipped with a warning.
"""),
    cfg.IntOpt(
        'store_cache_ttl',
        default=10,
        min=0,
        help="""
Seconds the scheduler keeps what it read from the policy store (scopes,
and each group's policies) before reading it again.

A policy change made through the API reaches the scheduler within this
delay. 0 reads the store for every group boot. The last copy read is kept
beyond this delay only to tell hard from soft policies while the store is
unreachable.
"""),
    cfg.FloatOpt(
        'store_retry_interval',
        default=10.0,
        min=0.0,
        help="""
Seconds the scheduler leaves the policy store alone after it failed to
answer (a circuit breaker). Meanwhile group boots are decided at once from
the answers read last: soft stored policies are skipped, hard ones and
groups never read fail closed with a reason saying so; boots outside stored
groups are not affected. The outage is logged once when it starts and once
when it ends. 0 retries at every request.
"""),
    cfg.FloatOpt(
        'placement_retry_interval',
        default=10.0,
        min=0.0,
        help="""
Seconds the scheduler stops asking Placement where group members in flight
(scheduled, not yet on their compute node) have been claimed, after
Placement failed to answer (a circuit breaker). Meanwhile boots into groups
with hard scoped policies and members in flight fail at once with a reason
saying so (fail closed); groups with soft policies only are decided without
those members. The outage is logged once when it starts and once when it
ends. 0 asks at every request. Each call is bounded by nova's own
``[placement] timeout``.
"""),
    cfg.StrOpt(
        COORDINATION_URL,
        secret=True,
        help="""
tooz coordination backend that serialises the scheduling decisions of server
groups with hard scoped policies across every nova-scheduler of the cloud.

When set, each scheduler holds a lock named after the server group from the
start of ``select_destinations`` (before our request filter reads where the
members are) until nova has claimed the chosen hosts in Placement, so the next
scheduler deciding for the same group sees every claim. Use a backend all the
schedulers reach: ``redis://``, ``etcd3+http://``, ``zookeeper://``,
``mysql://`` or ``postgresql://``; ``file:///path`` only serialises the
schedulers of one host. Unset (the default), the lock lives in each
nova-scheduler process: enough for a cloud with one scheduler, but two
schedulers deciding for one group at the same moment may both pass a hard
scoped policy (see the admin guide "Running several schedulers").

Related options:

* ``coordination_lock_timeout``
"""),
    cfg.FloatOpt(
        COORDINATION_LOCK_TIMEOUT,
        default=30.0,
        min=0.1,
        help="""
Seconds a scheduler waits for the lock of a server group with hard scoped
policies before the boot fails with "No valid host" and a reason saying so.
It bounds the wait behind a scheduler that crashed while holding the lock
(the backend frees such a lock when its session or heartbeat expires) and
the wait when the backend is unreachable.

Every call to the lock service is bounded by it, connecting included: a
backend that refuses connections, answers late or accepts them and never
answers fails the boot within this many seconds, with a reason naming the
lock service (fail closed; boots with soft policies only take no lock and
go on). A ``redis://`` URL gets ``socket_timeout`` and
``socket_connect_timeout`` of this many seconds unless it sets its own.
After a failure the scheduler connects afresh at the next boot, so boots
are scheduled again as soon as the backend answers.
"""),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register the group and its options on ``conf`` (idempotent)."""
    groups.register(conf, scoped_policies_group, scheduler_opts)


def list_opts():
    return {scoped_policies_group: scheduler_opts}
