"""Options of the stack holds' quota check, in ``[scoped_policies_api]``
(the policy API's group; a module of their own)."""

from oslo_config import cfg

from nova_scoped_policies.conf import api
from nova_scoped_policies.conf import groups

quota_opts = [
    cfg.BoolOpt(
        'check_stack_quota',
        default=True,
        help="""
Keep each project's stack holds within its Nova quota of instances, cores
and ram.

A stack decision holds its servers' resources in Placement until they boot
or the lease ends. With Nova's default quota counting, holds count against
no quota: a project could hold, one stack after another, capacity it may
never boot. With this option, ``POST /stacks`` and ``renew`` read the
project's quota and usage from Nova (``GET
/os-quota-sets/{project}/detail`` with the ``[nova]`` credentials) and
answer 403 "Quota exceeded for <resource>" (as Nova answers a boot) when
what the project uses, plus what its stack decisions hold, plus what the
stack asks would pass a limit; a decision is checked again once held (two
decisions at once). When Nova does not answer, the request answers 503.

Without ``[nova]`` credentials (``auth_type`` unset) the service cannot
read quotas and checks nothing. Set False to hold beyond quotas, as before
this option existed.

Related options: ``nova_counts_usage_from_placement``, ``[nova]``.
"""),
    cfg.BoolOpt(
        'nova_counts_usage_from_placement',
        default=False,
        help="""
Whether Nova counts the ``cores`` and ``ram`` in use from Placement.

Set True when Nova's nova.conf (of nova-api) has ``[quota]
count_usage_from_placement = True``, or counts with unified limits
(``[quota] driver = nova.quota.UnifiedLimitsDriver``): Nova's usage then
sums every allocation of the project, the stack holds included, and the
quota check of ``check_stack_quota`` does not count held cores and ram a
second time. ``instances`` are counted by Nova from its instance records
in every mode, so held servers are always added to them. Leave False for
Nova's default counting (from its cell databases), where holds are in no
usage.

Related options: ``check_stack_quota``.
"""),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register the options in ``[scoped_policies_api]`` (idempotent)."""
    groups.register(conf, api.api_group, quota_opts)


def list_opts():
    return {api.api_group: quota_opts}
