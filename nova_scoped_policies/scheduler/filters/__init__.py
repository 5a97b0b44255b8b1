"""Scheduler filters. nova.conf::

    [filter_scheduler]
    available_filters = nova_scoped_policies.scheduler.filters.all_filters
"""

from nova_scoped_policies.scheduler import plugins


def all_filters():
    """The filter classes of nova-scoped-policies (for nova's loader).

    Listing them changes nothing in nova: the seam
    (:mod:`nova_scoped_policies.nova_seam`) is installed when
    nova-scheduler's HostManager builds an enabled filter or weigher of
    ours, once.
    """
    return plugins.load_classes(plugins.FILTERS_NAMESPACE)
