"""ScopedAntiAffinityFilter: the hard policies that keep members apart."""

from nova_scoped_policies.scheduler.filters import base


class ScopedAntiAffinityFilter(base.ScopedPolicyFilter):
    """Spread the group: ``anti-affinity:<scope>`` with
    ``max_server_per_<scope>``, ``anti-affinity:<scope>:<id>`` and the
    ``min_domains_<scope>`` rule (LLMN), ``spread:<scope>`` with
    ``max_skew_<scope>``: every plugin whose ``filter`` is
    ``anti-affinity``.

    Replaces nova's ServerGroupAntiAffinityFilter: a Nova ``anti-affinity``
    group with ``max_server_per_host`` is ``anti-affinity:host``.
    """

    kind = 'anti-affinity'
