"""Aggregate changes reach our cache as they reach nova's HostManager.

nova-api casts ``update_aggregates`` / ``delete_aggregate`` to every
nova-scheduler (fanout) when an operator creates, changes or deletes an
aggregate, its hosts or its metadata. :func:`install` wraps those two
methods of nova's ``SchedulerManager`` so that they also mark our
:class:`aggregate_cache.AggregateCache` stale: the next request reloads the
aggregates once, instead of waiting up to ``aggregate_refresh_interval``
(which remains the safety net for a lost cast). No query per request.

Installed once, like :mod:`coordination`, from :func:`request_filters.sync`;
refuses nova methods whose parameters differ from the ones it knows.
"""

import functools
import inspect

from oslo_log import log as logging

from nova.scheduler import manager as sched_manager

LOG = logging.getLogger(__name__)

_MARK = '_nova_scoped_policies_wrapped'
EXPECTED = {
    'update_aggregates': ('self', 'ctxt', 'aggregates'),
    'delete_aggregate': ('self', 'ctxt', 'aggregate'),
}


class WrapError(RuntimeError):
    """nova's method is not the one this wrapper knows."""


def check_signature(name: str, func) -> None:
    names = tuple(inspect.signature(inspect.unwrap(func)).parameters)
    if names != EXPECTED[name]:
        raise WrapError(
            f'nova.scheduler.manager.SchedulerManager.{name} takes {names}, '
            f'nova-scoped-policies expects {EXPECTED[name]}: this nova '
            f'release is not supported')


def _invalidating(original):
    from nova_scoped_policies.scheduler import state

    @functools.wraps(original)
    def wrapper(self, ctxt, *args, **kwargs):
        try:
            return original(self, ctxt, *args, **kwargs)
        finally:
            state.states().aggregates_changed()

    setattr(wrapper, _MARK, original)
    return wrapper


def install(cls=sched_manager.SchedulerManager) -> None:
    """Wrap the aggregate methods of ``cls`` once (idempotent).

    :raises WrapError: nova's methods have other parameters than expected.
    """
    for name in EXPECTED:
        current = cls.__dict__[name]
        if getattr(current, _MARK, None) is not None:
            continue
        check_signature(name, current)
        setattr(cls, name, _invalidating(current))
        LOG.debug('nova-scoped-policies: %s also refreshes the scoped '
                  'policies aggregate cache', name)


def uninstall(cls=sched_manager.SchedulerManager) -> None:
    """Put nova's methods back (tests)."""
    for name in EXPECTED:
        original = getattr(cls.__dict__[name], _MARK, None)
        if original is not None:
            setattr(cls, name, original)
