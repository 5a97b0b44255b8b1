"""One serialisation point across schedulers for hard scoped policies.

Two schedulers (or two requests of one scheduler) deciding at the same time
for one server group each see the members the other has not claimed yet, so
both may pass ``anti-affinity:rack``. :func:`install` wraps nova's
``SchedulerManager.select_destinations`` so that a request for a group
with hard scoped policies holds the group's lock from the start (before the
request filters read where the members are) until nova returns, i.e. after
nova has claimed the chosen hosts in Placement. The next holder then reads
those claims (:class:`members.InFlightMemberLocator`). Such a request gets
no alternate hosts (see :func:`_without_alternates`). The lock is a tooz
lock when ``[scoped_policies] coordination_backend_url`` names a backend,
which several schedulers need; without one it is a lock of this process,
which serialises the requests of one nova-scheduler process only.

Nova's source is not patched: :func:`install` replaces the class attribute
once, from :func:`request_filters.sync`, which nova-scheduler runs when it
loads ``nova_scoped_policies.scheduler.filters.all_filters`` named in
nova.conf. It refuses to wrap a ``select_destinations`` whose parameters
differ from the ones it was written for.
"""

import functools
import inspect
import socket
import threading
import types
import typing
import uuid
import weakref

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging

from nova import exception
from nova.scheduler import manager as sched_manager
from nova_scoped_policies import conf as nsp_conf

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
nsp_conf.register_opts(CONF)

_MARK = '_nova_scoped_policies_wrapped'
EXPECTED_PARAMETERS = ('self', 'context', 'request_spec', 'filter_properties',
                       'spec_obj', 'instance_uuids', 'return_objects',
                       'return_alternates')
"""The parameters of nova's ``select_destinations`` the wrapper relies on."""
LOCK_PREFIX = b'nova-scoped-policies-group-'


class WrapError(RuntimeError):
    """nova's select_destinations is not the one this wrapper knows."""


class _LocalLock:
    """A lock of this process with tooz's ``acquire(blocking)`` signature."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def acquire(self, blocking=True) -> bool:
        if blocking is True:
            return self._lock.acquire()
        if not blocking:
            return self._lock.acquire(blocking=False)
        return self._lock.acquire(timeout=blocking)

    def release(self) -> None:
        self._lock.release()


class LocalCoordinator:
    """Locks per server group inside this process: the default without a
    ``coordination_backend_url``. It serialises the requests one
    nova-scheduler process handles at once, never two schedulers: those
    need a tooz backend (doc/source/admin/schedulers.rst)."""

    url = None

    def __init__(self) -> None:
        self._locks: 'weakref.WeakValueDictionary[str, _LocalLock]' = \
            weakref.WeakValueDictionary()
        self._guard = threading.Lock()

    def lock(self, group_uuid: str) -> _LocalLock:
        with self._guard:
            found = self._locks.get(group_uuid)
            if found is None:
                found = self._locks[group_uuid] = _LocalLock()
            return found

    def stop(self) -> None:
        pass


class Coordinator:
    """A started tooz coordinator for one backend URL, per process.

    :param url: the tooz backend URL.
    """

    def __init__(self, url: str) -> None:
        from tooz import coordination
        self.url = url
        member = f'nova-scheduler-{socket.gethostname()}-{uuid.uuid4()}'
        self._coordinator = coordination.get_coordinator(
            url, member.encode())
        self._coordinator.start(start_heart=True)

    def lock(self, group_uuid: str):
        return self._coordinator.get_lock(LOCK_PREFIX + group_uuid.encode())

    def stop(self) -> None:
        self._coordinator.stop()


_coordinator: typing.Union[Coordinator, LocalCoordinator, None] = None
_coordinator_lock = threading.Lock()


def coordinator() -> typing.Union[Coordinator, LocalCoordinator]:
    """The process' coordinator for the configured URL, or this process'
    own locks (:class:`LocalCoordinator`) when none is configured.

    :raises NoValidHost: the backend cannot be reached.
    """
    global _coordinator
    url = CONF.scoped_policies.coordination_backend_url
    with _coordinator_lock:
        if _coordinator is not None and _coordinator.url != url:
            _coordinator.stop()
            _coordinator = None
        if not url and _coordinator is None:
            _coordinator = LocalCoordinator()
        if url and _coordinator is None:
            try:
                _coordinator = Coordinator(url)
            except Exception as exc:
                LOG.error('Scoped policies: coordination backend '
                          'unreachable: %s', exc)
                raise exception.NoValidHost(reason=(
                    'scoped policies: the group has hard scoped policies '
                    'and the scheduler cannot reach its coordination '
                    'backend to serialise its boots (fail closed)'))
        return _coordinator


def reset() -> None:
    """Stop the process' coordinator (tests)."""
    global _coordinator
    with _coordinator_lock:
        if _coordinator is not None:
            _coordinator.stop()
            _coordinator = None


def _undecorated(func, name='select_destinations'):
    """The function under decorators (oslo.messaging's
    ``expected_exceptions`` keeps it in its closure, not ``__wrapped__``).
    """
    func = inspect.unwrap(func)
    if func.__name__ == name:
        return func
    for cell in func.__closure__ or ():
        inner = cell.cell_contents
        if isinstance(inner, types.FunctionType):
            return _undecorated(inner, name)
    return func


def check_signature(func) -> None:
    """Raise WrapError unless ``func`` takes the parameters we pass on."""
    names = tuple(inspect.signature(_undecorated(func)).parameters)
    if names != EXPECTED_PARAMETERS:
        raise WrapError(
            f'nova.scheduler.manager.SchedulerManager.select_destinations '
            f'takes {names}, nova-scoped-policies expects '
            f'{EXPECTED_PARAMETERS}: this nova release is not supported')


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


def _acquired(names: typing.Sequence[str]) -> list:
    """Take the locks of ``names`` in their (sorted) order, as every
    scheduler does, so that two requests never wait for each other.

    :returns: [(name, lock)] held.
    :raises NoValidHost: one was not had within
        ``[scoped_policies] coordination_lock_timeout`` (those taken are
        given back: fail closed).
    """
    coord = coordinator()
    timeout = CONF.scoped_policies.coordination_lock_timeout
    held = []
    for name in names:
        lock = coord.lock(name)
        try:
            acquired = lock.acquire(blocking=timeout)
        except Exception as exc:
            LOG.error('Scoped policies: coordination backend error: %s', exc)
            acquired = False
        if not acquired:
            _released(held)
            raise exception.NoValidHost(reason=(
                f'scoped policies: another scheduler has been deciding for '
                f'this server group or stack for more than {timeout:g} s, '
                f'or the coordination backend did not answer (fail closed)'))
        held.append((name, lock))
    return held


def _released(held: list) -> None:
    for name, lock in reversed(held):
        try:
            lock.release()
        except Exception as exc:  # the backend expires it anyway
            LOG.warning('Scoped policies: could not release the lock of '
                        '%s: %s', name, exc)


def _serialised(original):
    from nova import objects
    from nova_scoped_policies.scheduler import state

    @functools.wraps(original)
    @messaging.expected_exceptions(exception.NoValidHost)
    def select_destinations(self, context, request_spec=None,
                            filter_properties=None,
                            spec_obj=sched_manager.SchedulerManager._sentinel,
                            instance_uuids=None, return_objects=False,
                            return_alternates=False):
        if spec_obj is sched_manager.SchedulerManager._sentinel:
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
        held = _acquired(names)
        try:
            return _without_alternates(call(), return_objects)
        finally:
            _released(held)

    setattr(select_destinations, _MARK, original)
    return select_destinations


def install(cls=sched_manager.SchedulerManager) -> bool:
    """Wrap ``cls.select_destinations`` once (idempotent).

    :returns: True when the wrapper is in place.
    :raises WrapError: nova's method has other parameters than expected.
    """
    current = cls.__dict__['select_destinations']
    if getattr(current, _MARK, None) is not None:
        return True
    check_signature(current)
    cls.select_destinations = _serialised(current)
    LOG.info('nova-scoped-policies: select_destinations serialised per '
             'server group with hard scoped policies')
    return True


def uninstall(cls=sched_manager.SchedulerManager) -> None:
    """Put nova's method back (tests)."""
    original = getattr(cls.__dict__['select_destinations'], _MARK, None)
    if original is not None:
        cls.select_destinations = original
