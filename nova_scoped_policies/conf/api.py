"""Options of the ``[scoped_policies_api]`` group read by the policy API
service (not ``[api]``: nova.conf has one, and the scheduler registers
every group of ours on nova's configuration)."""

from oslo_config import cfg

from nova_scoped_policies.conf import groups
from nova_scoped_policies.conf import ksa

GROUP_NAME = 'scoped_policies_api'
api_group = cfg.OptGroup(
    GROUP_NAME,
    title='Policy API service',
    help="""
Options of ``nova-scoped-policies-api``, the REST service for policy scopes
and scoped server group policies. See the admin guide "Deploying the policy
service".
""")

api_opts = [
    cfg.StrOpt(
        'auth_strategy',
        default='keystone',
        choices=[
            ('keystone', 'Validate tokens with keystonemiddleware '
             '(configure ``[keystone_authtoken]``).'),
            ('noauth2', 'Trust the X-Project-Id, X-User-Id and X-Roles '
             'headers. For tests and the embedded simulator only.'),
        ],
        help="""
How the service authenticates requests.

Leave ``keystone`` in every real deployment. ``noauth2`` lets anyone who
can reach the port act as any project or as admin: use it only on a
loopback address for development and tests.
"""),
    cfg.HostAddressOpt(
        'bind_host',
        default='127.0.0.1',
        help="""
Address the development server (``nova-scoped-policies-api``) listens on.

Production deployments run the WSGI application under uwsgi or mod_wsgi and
do not read this option.
"""),
    cfg.PortOpt(
        'bind_port',
        default=8799,
        help="""
Port the development server listens on (see ``bind_host``). 8799 is used by
no OpenStack service (8779 is Trove's, 8778 Placement's). Change it when 8799
is taken on the machine; production deployments configure the port in uwsgi
or the web server instead.
"""),
    cfg.IntOpt(
        'max_group_members',
        default=1000,
        min=1,
        help="""
Most members one scoped server group may have.

``add_instance`` answers 409 beyond it. The audit of a group reads the
allocations of every member from Placement, so the cap bounds the cost and
the size of one audit response (server-group-update.rst). Raise it for
tenants with very large groups; groups already bigger keep their members.
"""),
    cfg.FloatOpt(
        'stack_time_limit',
        default=10.0,
        min=0.1,
        help="""
Seconds one stack decision (``POST /stacks``) may take, from the request to
its answer: releasing expired holds, reading Placement's free capacity and
the domains, the decision (the first decision, the solver's model, its
search and the replay), holding the decision in Placement and recording it.
The solver gets what is left once the cloud is read, less a tenth of this
limit kept for the hold and the record.

The search stops as soon as it has nothing to improve: a stack with no soft
policy takes the first decision that meets every hard policy; one with soft
policies stops at a proven optimum, within ``stack_relative_gap`` of the
best bound, or at this limit, and the answer's ``optimal`` says whether it
was cut short. When the limit runs out before any decision is found (or
while Placement is read), the answer is ``409`` with the error code
``scoped_policies.stack_not_found_in_time``: "not found within the limit:
may still fit". It is never called infeasible: raise this limit for clouds
and stacks that large.

One call to Placement is not cut short: a Placement that does not answer is
bounded by ``connect_timeout`` and ``read_timeout`` (``503``), not by this
limit.

Related options:

* ``stack_relative_gap``
* ``stack_workers``
* ``connect_timeout``, ``read_timeout``
"""),
    cfg.FloatOpt(
        'stack_relative_gap',
        default=0.05,
        min=0.0,
        max=1.0,
        help="""
The relative gap at which the search of a stack decision with soft policies
stops: as soon as the soft policies' cost of the best decision found is
within this share of the best bound the solver has proven (``|cost - bound|
<= gap * max(1, cost)``), that decision is the answer. 0 searches until the
decision is proven optimal or ``stack_time_limit`` runs out.

The cost counts the soft policies a decision goes against (each times its
``weight_<policy>``), and the bound is what no decision can beat: with the
default 0.05, a decision is taken when no other could be more than 5%
better. A proof of optimality often takes far longer than finding the
optimum, so a small gap answers much sooner at the price of a decision that
may be a little worse; the answer's ``optimal`` is false then. Stacks with
no soft policy are not searched beyond their first decision that meets every
hard policy: every such decision is as good.

Related options:

* ``stack_time_limit``
"""),
    cfg.IntOpt(
        'stack_workers',
        default=0,
        min=0,
        help="""
Search workers of the joint solver for one stack decision; 0 uses every
core this process may run on.

More workers find a first decision sooner on large clouds; with one, the
same cloud and stack give the same decision under the same load (the
simulator uses one, and bounds the search by the solver's deterministic
work instead of seconds, so that its answers are the same on any machine).
Each decision begins with one server at a time (nova's order, the engine's
checks, within 40% of what is left of ``stack_time_limit``): the solver
starts from that decision, and it is the answer when the solver finds none
in time, so a stack that fits that way is never refused for lack of time.
Concurrent decisions share the cores: on a service that decides many
stacks at once, set fewer workers.

Related options:

* ``stack_time_limit``
"""),
    cfg.IntOpt(
        'stack_reap_interval',
        default=60,
        min=0,
        help="""
Seconds between two runs of the reaper that releases the Placement holds of
stack decisions whose lease ran out (``nova-scoped-policies-api`` and the
WSGI application run it in a background thread; 0 disables the thread).

Every ``/stacks`` request also releases expired holds first, so a lease is
never honoured longer than the interval while the service is idle.
"""),
    cfg.IntOpt(
        'stack_sweep_interval',
        default=3600,
        min=0,
        help="""
Seconds between two sweeps that give back every stack hold in Placement
(consumer type ``SCOPED_POLICY_HOLD``) whose stack record is gone; 0
disables them. The reaper's thread runs them (see
``stack_reap_interval``, which must not be 0 for sweeps to run).

A decision's record is always written before its holds, so a hold without
a record is rare: a write Placement applied after the policy API gave up
waiting for it and after the reaper released the decision. A sweep reads
the allocations of every resource provider (one ``GET`` each), so keep it
rare on large clouds; lower it when such leaks must be given back sooner.
Holds written before this release have no recognisable consumer uuid and
are not swept.

Related options:

* ``stack_reap_interval``
"""),
    cfg.FloatOpt(
        'connect_timeout',
        default=5.0,
        min=0.1,
        help="""
Seconds the policy API waits for a connection to Placement or Nova (every
call, ``[placement]`` and ``[nova]``) before it gives up on that call.

A call that cannot connect in time fails the request with a 503 that names
the service; nothing half is written (a stack decision whose hold was not
confirmed by Placement is released, see the admin guide "Faults"). Raise
it only when Placement or Nova is reached over a slow link. A ``timeout``
set in ``[placement]`` or ``[nova]`` (keystoneauth1's) replaces both this
option and ``read_timeout`` for that service.

Related options:

* ``read_timeout``
"""),
    cfg.FloatOpt(
        'read_timeout',
        default=20.0,
        min=0.1,
        help="""
Seconds the policy API waits for Placement or Nova to answer one call once
connected (between two bytes of the answer) before it gives up on it.

With the defaults a request that needs a silent Placement (it accepts the
connection and never answers) answers 503 within about 25 seconds:
``POST /stacks``, ``DELETE /stacks/{id}`` and the stack actions give up at
their first call that times out, and write nothing half. Raise it when
Placement's answers to large clouds' ``GET /allocation_candidates`` take
longer; a request may then wait about ``connect_timeout`` plus this long.

Related options:

* ``connect_timeout``
"""),
    cfg.FloatOpt(
        'repair_time_limit',
        default=10.0,
        min=0.1,
        help="""
Seconds the repair planner may take for one plan (``POST /repairs``): the
joint solver's searches for every group and stack to repair share them.
"""),
    cfg.IntOpt(
        'repair_move_timeout',
        default=600,
        min=1,
        help="""
Seconds one live migration of a repair plan may take (``POST
/repairs/apply``) before the plan stops there, as if it had failed.
"""),
    cfg.IntOpt(
        'repair_max_parallel',
        default=4,
        min=1,
        help="""
Most live migrations of one repair plan running at once. A caller asks for
at most this many (``max_parallel``); moves run together only when they
touch different hosts, so the plan's order still holds.
"""),
    cfg.FloatOpt(
        'repair_task_keep_days',
        default=7.0,
        min=0,
        help="""
Days an ended repair task (``POST /repairs/apply`` from microversion 1.4)
stays in the policy store for ``GET /repairs/tasks/{id}``; older ones are
forgotten when a task starts or tasks are listed.
"""),
    cfg.IntOpt(
        'repair_task_stale_seconds',
        default=120,
        min=10,
        help="""
Seconds without a heartbeat after which a running repair task counts as
interrupted (the API process that ran it is gone): its claims on its
servers go and its moves done stay said; a new plan finishes the work. A
process on the same host that is gone is noticed at once when an API
process starts. Keep it well above the time one poll of Nova can take.

Related options: ``repair_move_timeout``.
"""),
    cfg.StrOpt(
        'export_obfuscation_key',
        secret=True,
        help="""
The secret key of the surrogates ``GET /export?obfuscate=true``
(``openstack scoped policy export --obfuscate``) writes for host,
aggregate, server, group, stack and project names (an HMAC of each name):
the same name gets the same surrogate in every export made with the
same key, so that exports compare. Unset, a key known to everyone is
used, and a guessable name (``compute-017``) can be found from its
surrogate: set a long random key before an export leaves the company,
and keep it.
"""),
    cfg.IntOpt(
        'export_workers',
        default=16,
        min=1,
        max=256,
        help="""
Most calls to Placement one export (``GET /export``) makes at once. An
export reads each resource provider's inventories and allocations (two
calls a provider), the providers of each trait and of each scope's
aggregates; at 50,000 compute nodes that is about 100,000 calls, and
each takes Placement a few milliseconds. Raise it when Placement runs
many workers and an export is too slow; lower it to spare a small
Placement. 1 makes the calls one at a time.

Related options: ``[placement]`` (the client), ``read_timeout``.
"""),
    cfg.ListOpt(
        'scheduler_config_files',
        default=[],
        help="""
nova-scheduler's configuration, which an export (``GET /export``) reads
for the scheduler options that shape a decision and writes as the
scenario's ``config``: files and directories (``nova.conf``,
``nova.conf.d``), read in this order as nova-scheduler reads its
``--config-file`` and ``--config-dir``. From them the export takes
``[scoped_policies]`` (ours: ``allow_policy_hint``, the weight
multipliers, the request filters' switches, ``max_query_aggregates``)
and nova's ``[filter_scheduler]`` (``enabled_filters``,
``weight_classes``, the weight multipliers..., typed by nova's own
options where nova is installed beside this service, else as written).

Unset (the default), the export writes this service's own
``[scoped_policies]`` options and no ``[filter_scheduler]``: the
simulator then runs what the README configures. Set it where this
service runs beside nova-scheduler, or to a copy of its configuration,
so that simulating an export decides as the cloud does. A file that
cannot be read fails the export (503) saying which.

Related options: ``[scoped_policies]`` and ``[filter_scheduler]`` of
nova.conf.
"""),
]


NOVA_GROUP = 'nova'
nova_group = cfg.OptGroup(
    NOVA_GROUP,
    title='Nova API client of the policy service',
    help="""
How the policy service reads the members of Nova server groups (compute
API, ``GET /os-server-groups/{id}``), so that audits cover the servers
booted into a group, not only those added through ``add_instance``: the
usual keystoneauth1 options, with credentials allowed to read every
project's server groups (admin). Leave ``auth_type`` unset to audit only
the members added through the policy API.
""")


def timeouts(conf: cfg.ConfigOpts) -> tuple:
    """(connect, read) seconds of the policy API's calls to Placement and
    Nova."""
    group = conf[GROUP_NAME]
    return group.connect_timeout, group.read_timeout


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register the groups and their options on ``conf`` (idempotent)."""
    groups.register(conf, api_group, api_opts)
    groups.register(conf, nova_group)
    ksa.register_ks_opts(conf, NOVA_GROUP)


def list_opts():
    return {api_group: api_opts, nova_group: ksa.list_ks_opts()}
