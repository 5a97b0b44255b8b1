"""ScopedAffinityFilter: hard ``affinity:<scope>[:<id>]`` policies."""

from nova_scoped_policies.policy import PolicyType
from nova_scoped_policies.scheduler.filters import base


class ScopedAffinityFilter(base.ScopedPolicyFilter):
    """Keep the group together in a domain of every affinity scope.

    Replaces nova's ServerGroupAffinityFilter: a Nova ``affinity`` group is
    ``affinity:host``.
    """

    families = (PolicyType.AFFINITY.value,)
