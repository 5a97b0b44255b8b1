"""Our pre-placement request filters, in nova's request-filter list.

nova keeps its request filters in the module list
``nova.scheduler.request_filter.ALL_REQUEST_FILTERS``, which
``process_reqspec(ctxt, request_spec)`` runs in order for every request;
it loads no plugin there. :func:`sync` appends every request filter of
ours whose ``[scoped_policies]`` option is true, once, and removes ours
whose option is false. nova's own filters are never touched and stay
first.
"""

import typing

from oslo_log import log as logging

from nova_scoped_policies.nova_seam import checks
from nova_scoped_policies.scheduler import plugins
from nova_scoped_policies.scheduler import request_filters as our_filters

LOG = logging.getLogger(__name__)

NAMESPACE = our_filters.NAMESPACE
_MARK = '_nova_scoped_policies_filter'
WHERE = 'nova.scheduler.request_filter.process_reqspec'
EXPECTED = ('ctxt', 'request_spec')


def check() -> None:
    """Raise :class:`checks.UnknownNova` unless nova runs its request
    filters from the list this module edits, with the arguments ours
    take."""
    from nova.scheduler import request_filter
    checks.expect(WHERE, getattr(request_filter, 'process_reqspec', None),
                  EXPECTED)
    if not isinstance(getattr(request_filter, 'ALL_REQUEST_FILTERS', None),
                      list):
        raise checks.UnknownNova(
            'nova.scheduler.request_filter.ALL_REQUEST_FILTERS is not a '
            f'list: nova-scoped-policies was written for '
            f'{checks.WRITTEN_FOR}')


def ours() -> typing.List[str]:
    """The names of our filters now in nova's list."""
    from nova.scheduler import request_filter
    return [getattr(f, _MARK) for f in request_filter.ALL_REQUEST_FILTERS
            if getattr(f, _MARK, None)]


def sync() -> typing.List[str]:
    """Make nova's request-filter list hold exactly our enabled filters.

    Idempotent: calling it again changes nothing.

    :returns: the names of our filters now in nova's list.
    """
    from nova.scheduler import request_filter
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
    return active


def uninstall() -> None:
    """Take ours out of nova's list (tests)."""
    from nova.scheduler import request_filter
    request_filter.ALL_REQUEST_FILTERS[:] = [
        f for f in request_filter.ALL_REQUEST_FILTERS
        if not getattr(f, _MARK, None)]
