"""Pre-placement request filters (``nova_scoped_policies.scheduler.
request_filters`` entry points), each enabled by a ``[scoped_policies]``
option. nova has no plugin point for request filters: the seam
(:mod:`nova_scoped_policies.nova_seam.request_filters`) puts the enabled
ones into nova's list when nova-scheduler starts.
"""

NAMESPACE = 'nova_scoped_policies.scheduler.request_filters'
