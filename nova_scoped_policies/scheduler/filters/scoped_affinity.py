"""ScopedAffinityFilter: the hard policies that keep members where they
belong: ``affinity:<scope>[:<id>]``, ``license:<product>``."""

from nova_scoped_policies.scheduler.filters import base


class ScopedAffinityFilter(base.ScopedPolicyFilter):
    """Keep the group together in a domain of every affinity scope.

    Replaces nova's ServerGroupAffinityFilter: a Nova ``affinity`` group is
    ``affinity:host``. Carries every plugin whose ``filter`` is
    ``affinity``.
    """

    kind = 'affinity'
