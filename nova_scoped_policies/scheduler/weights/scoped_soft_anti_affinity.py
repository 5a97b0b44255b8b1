"""ScopedSoftAntiAffinityWeigher: ``soft-anti-affinity:<scope>[:<id>]``."""

from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.scheduler.weights import base


class ScopedSoftAntiAffinityWeigher(base.ScopedSoftPolicyWeigher):
    """Prefer hosts whose domains hold fewer members of the group.

    Replaces nova's ServerGroupSoftAntiAffinityWeigher
    (``soft-anti-affinity`` is ``soft-anti-affinity:host``).
    """

    kind = 'soft-anti-affinity'
    option = sched_conf.SOFT_ANTI_AFFINITY_MULTIPLIER
