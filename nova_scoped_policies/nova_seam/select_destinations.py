"""The serialised ``select_destinations``: nova's method, inside the locks
of :mod:`nova_scoped_policies.scheduler.coordination`.

:func:`install` replaces the class attribute
``nova.scheduler.manager.SchedulerManager.select_destinations`` with a
wrapper that, for a request whose server group has hard scoped policies
(or a stack server), takes the group's lock before nova runs the request
filters and gives it back once nova has claimed the chosen hosts in
Placement. Such a request gets no alternate hosts
(:func:`_without_alternates`); every request whose scoped policies left no
host gets a NoValidHost whose reason says why (:func:`_explained`). The
first request of a process starts its aggregate listener
(:func:`nova_scoped_policies.nova_seam.listening`).

nova names its "no spec given" default ``SchedulerManager._sentinel``: the
wrapper keeps the same default object, so nova's test of it holds.
"""

import functools

from oslo_log import log as logging
import oslo_messaging as messaging

from nova import exception
from nova.scheduler import manager as sched_manager
from nova_scoped_policies import nova_seam
from nova_scoped_policies.nova_seam import checks
from nova_scoped_policies.scheduler import coordination

LOG = logging.getLogger(__name__)

WHERE = 'nova.scheduler.manager.SchedulerManager.select_destinations'
EXPECTED_PARAMETERS = ('self', 'context', 'request_spec', 'filter_properties',
                       'spec_obj', 'instance_uuids', 'return_objects',
                       'return_alternates')
"""The parameters of nova's ``select_destinations`` the wrapper passes on."""
_MARK = '_nova_scoped_policies_wrapped'


def check(cls=sched_manager.SchedulerManager) -> None:
    """Raise :class:`checks.UnknownNova` unless ``cls`` has the method and
    the default the wrapper was written for."""
    current = cls.__dict__.get('select_destinations')
    checks.expect(WHERE, getattr(current, _MARK, current),
                  EXPECTED_PARAMETERS)
    if getattr(cls, '_sentinel', None) is None:
        raise checks.UnknownNova(
            'nova.scheduler.manager.SchedulerManager._sentinel is missing: '
            f'nova-scoped-policies was written for {checks.WRITTEN_FOR}')


def _explained(call, spec_obj):
    """nova's answer; when it found no valid host and the group's scoped
    policies left none, the reason says why in a tenant's words (the
    server's fault shows it)."""
    from nova_scoped_policies.scheduler import state
    try:
        return call()
    except (exception.NoValidHost, messaging.ExpectedException) as exc:
        # nova's method is decorated with expected_exceptions: its
        # NoValidHost arrives wrapped
        inner = exc.exc_info[1] if isinstance(
            exc, messaging.ExpectedException) else exc
        if not isinstance(inner, exception.NoValidHost):
            raise
        try:
            why = state.states().explain(spec_obj)
        except Exception:  # never hide nova's own answer
            LOG.exception('Scoped policies: cannot explain NoValidHost')
            why = None
        if why is None:
            raise
        LOG.info('No valid host for %s: %s', spec_obj.instance_uuid
                 if 'instance_uuid' in spec_obj else '?', why)
        raise exception.NoValidHost(reason=why) from exc


def _without_alternates(selections, return_objects):
    """Keep only the chosen host of each instance.

    nova-conductor retries a failed build on the next alternate by claiming
    it in Placement itself, without the scheduler; the alternates were
    checked before the group's other members in flight were placed, and
    scoped policies have no late check on the compute node. A group with
    hard scoped policies therefore gets no alternates: its failed build
    goes to ERROR instead of breaking the policy.
    """
    if not return_objects:  # the legacy answer carries no alternates
        return selections
    return [list(hosts[:1]) for hosts in selections]


def _serialised(original, sentinel=None):
    """The wrapper of ``original``; ``sentinel`` is the class's default
    for ``spec_obj`` (nova's ``SchedulerManager._sentinel`` by default).
    """
    from nova import objects
    from nova_scoped_policies.scheduler import state
    if sentinel is None:
        sentinel = sched_manager.SchedulerManager._sentinel

    @functools.wraps(original)
    @messaging.expected_exceptions(exception.NoValidHost)
    def select_destinations(self, context, request_spec=None,
                            filter_properties=None,
                            spec_obj=sentinel,
                            instance_uuids=None, return_objects=False,
                            return_alternates=False):
        nova_seam.listening()
        if spec_obj is sentinel:
            spec_obj = objects.RequestSpec.from_primitives(
                context, request_spec, filter_properties)
        call = functools.partial(
            original, self, context, request_spec, filter_properties,
            spec_obj=spec_obj, instance_uuids=instance_uuids,
            return_objects=return_objects,
            return_alternates=return_alternates)
        call = functools.partial(_explained, call, spec_obj)
        names = state.states().serialised(spec_obj)
        if not names:
            return call()
        held = coordination.acquired(names)
        try:
            return _without_alternates(call(), return_objects)
        finally:
            coordination.released(held)

    setattr(select_destinations, _MARK, original)
    return select_destinations


def install(cls=sched_manager.SchedulerManager) -> None:
    """Wrap ``cls.select_destinations`` once (idempotent).

    :raises checks.UnknownNova: nova's method is not the one expected.
    """
    current = cls.__dict__['select_destinations']
    if getattr(current, _MARK, None) is not None:
        return
    check(cls)
    cls.select_destinations = _serialised(current, cls._sentinel)
    LOG.info('nova-scoped-policies: select_destinations serialised per '
             'server group with hard scoped policies')


def installed(cls=sched_manager.SchedulerManager) -> bool:
    """Whether the wrapper is in place."""
    current = cls.__dict__.get('select_destinations')
    return getattr(current, _MARK, None) is not None


def uninstall(cls=sched_manager.SchedulerManager) -> None:
    """Put nova's method back (tests)."""
    original = getattr(cls.__dict__['select_destinations'], _MARK, None)
    if original is not None:
        cls.select_destinations = original
