"""Pre-placement request filters and their installation into nova.

nova keeps its request filters in the hard-coded list
``nova.scheduler.request_filter.ALL_REQUEST_FILTERS``. Ours join it when
nova-scheduler loads ``[filter_scheduler] available_filters`` and finds
``nova_scoped_policies.scheduler.filters.all_filters`` there:
:func:`sync` then appends every request filter whose ``[scoped_policies]``
option is true, once, and removes ours whose option is false. It also installs
the per-group serialisation of :mod:`..coordination` (idempotent; inert
while ``coordination_backend_url`` is unset) and the aggregate-change hook
of :mod:`..aggregate_events`. Nothing else is touched; with the
options false the list is nova's plus ``scoped_plan``, which is on by
default and does nothing for boots without its hints.
"""

import typing

from oslo_log import log as logging

from nova_scoped_policies.scheduler import plugins

LOG = logging.getLogger(__name__)

NAMESPACE = 'nova_scoped_policies.scheduler.request_filters'
_MARK = '_nova_scoped_policies_filter'


def sync() -> typing.List[str]:
    """Make nova's request-filter list hold exactly our enabled filters.

    Idempotent: calling it again changes nothing.

    :returns: the names of our filters now in nova's list.
    """
    # imported here: nova-scheduler has them loaded already, and the
    # simulator, which runs our filters itself, is spared nova's neutron
    # client (0.1 s of its start-up)
    from nova.scheduler import request_filter
    from nova_scoped_policies.scheduler import aggregate_events
    from nova_scoped_policies.scheduler import coordination
    pipeline = request_filter.ALL_REQUEST_FILTERS
    installed = {getattr(f, _MARK): f for f in pipeline
                 if getattr(f, _MARK, None)}
    active = []
    for cls in plugins.load_classes(NAMESPACE):
        name = cls.__name__
        instance = installed.get(name)
        enabled = (instance or cls()).enabled
        if enabled and instance is None:
            instance = cls()
            setattr(instance, _MARK, name)
            pipeline.append(instance)
            LOG.info('Request filter %s added to nova-scheduler', name)
        elif not enabled and instance is not None:
            pipeline.remove(instance)
            LOG.info('Request filter %s removed from nova-scheduler', name)
        if enabled:
            active.append(name)
    coordination.install()
    aggregate_events.install()
    return active
