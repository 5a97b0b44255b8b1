"""ScopedAntiAffinityFilter: hard anti-affinity policies and min_domains."""

from nova_scoped_policies import engine
from nova_scoped_policies.policy import PolicyType
from nova_scoped_policies.scheduler.filters import base


class ScopedAntiAffinityFilter(base.ScopedPolicyFilter):
    """Spread the group: ``anti-affinity:<scope>`` with
    ``max_server_per_<scope>``, ``anti-affinity:<scope>:<id>`` and the
    ``min_domains_<scope>`` rule (LLMN).

    Replaces nova's ServerGroupAntiAffinityFilter: a Nova ``anti-affinity``
    group with ``max_server_per_host`` is ``anti-affinity:host``.
    """

    families = (PolicyType.ANTI_AFFINITY.value, engine.MIN_DOMAINS_RULE)
