"""Thin adapters that run the policy engine inside nova-scheduler.

Operators enable them in nova.conf::

    [filter_scheduler]
    available_filters = nova.scheduler.filters.all_filters
    available_filters = nova_scoped_policies.scheduler.filters.all_filters
    enabled_filters = ...,ScopedAffinityFilter,ScopedAntiAffinityFilter
    weight_classes = nova.scheduler.weights.all_weighers,
        nova_scoped_policies.scheduler.weights.all_weighers

(``weight_classes`` is one comma-separated list, on one line in nova.conf.)

Everything nova-specific (RequestSpec, HostState, the database, CONF) stays
in this package; :mod:`nova_scoped_policies.engine` sees plain data only.
"""
