"""Scheduler weighers. nova.conf::

    [filter_scheduler]
    weight_classes = nova.scheduler.weights.all_weighers,
        nova_scoped_policies.scheduler.weights.all_weighers

(one comma-separated line in nova.conf)
"""

from nova_scoped_policies.scheduler import plugins


def all_weighers():
    """The weigher classes of nova-scoped-policies (for nova's loader)."""
    return plugins.load_classes(plugins.WEIGHERS_NAMESPACE)
