"""Scheduler filters. nova.conf::

    [filter_scheduler]
    available_filters = nova_scoped_policies.scheduler.filters.all_filters
"""

from nova_scoped_policies.scheduler import plugins
from nova_scoped_policies.scheduler import request_filters


def all_filters():
    """The filter classes of nova-scoped-policies (for nova's loader).

    nova-scheduler calls this when it loads ``available_filters``; it also
    installs the request filters enabled in ``[scoped_policies]`` (see
    :mod:`nova_scoped_policies.scheduler.request_filters`).
    """
    request_filters.sync()
    return plugins.load_classes(plugins.FILTERS_NAMESPACE)
