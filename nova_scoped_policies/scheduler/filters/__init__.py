"""Scheduler filters. nova.conf::

    [filter_scheduler]
    available_filters = nova_scoped_policies.scheduler.filters.all_filters
"""

from nova_scoped_policies.scheduler import plugins


def all_filters():
    """The filter classes of nova-scoped-policies (for nova's loader)."""
    return plugins.load_classes(plugins.FILTERS_NAMESPACE)
