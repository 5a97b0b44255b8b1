"""ScopedSoftAffinityWeigher: ``soft-affinity:<scope>[:<id>]``."""

from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.scheduler.weights import base


class ScopedSoftAffinityWeigher(base.ScopedSoftPolicyWeigher):
    """Prefer hosts whose domains hold more members of the group.

    Replaces nova's ServerGroupSoftAffinityWeigher (``soft-affinity`` is
    ``soft-affinity:host``).
    """

    kind = 'soft-affinity'
    option = sched_conf.SOFT_AFFINITY_MULTIPLIER
