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
import math
import socket
import threading
import time
import types
import typing
import urllib.parse
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

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        from tooz import coordination
        self.url = url
        member = f'nova-scheduler-{socket.gethostname()}-{uuid.uuid4()}'
        self._coordinator = coordination.get_coordinator(
            _bounded_url(url, timeout), member.encode())
        self._coordinator.start(start_heart=True)

    def lock(self, group_uuid: str):
        return self._coordinator.get_lock(LOCK_PREFIX + group_uuid.encode())

    def stop(self) -> None:
        self._coordinator.stop()


def _bounded_url(url: str, timeout: float) -> str:
    """``url`` with every socket call of a Redis backend bounded by
    ``timeout`` (connect and read), unless the URL sets its own: tooz's
    Redis client otherwise waits 30 s per call and never gives up
    connecting."""
    parts = urllib.parse.urlsplit(url)
    if not parts.scheme.startswith('redis'):
        return url
    query = urllib.parse.parse_qsl(parts.query)
    given = {key for key, _ in query}
    seconds = str(max(1, math.ceil(timeout)))
    for key in ('socket_timeout', 'socket_connect_timeout'):
        if key not in given:
            query.append((key, seconds))
    return urllib.parse.urlunsplit(parts._replace(
        query=urllib.parse.urlencode(query)))


def _shown(url: str) -> str:
    """The backend URL without credentials, for the log."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ''
    if parts.port:
        host += f':{parts.port}'
    return f'{parts.scheme}://{host}{parts.path}'


class Silent(Exception):
    """The lock service did not answer (or failed) within the bound."""


def _within(seconds: float, call, undo=None):
    """``call()`` in a thread of its own, given up after ``seconds``: no
    call to the lock service may hold a boot longer than the bound,
    whatever the driver does with a silent server. A result that arrives
    after it was given up is passed to ``undo`` (a lock acquired late is
    released at once).

    :raises Silent: it failed, or did not return in time.
    """
    box = {}
    guard = threading.Lock()
    done = threading.Event()

    def run():
        try:
            result = call()
        except Exception as exc:
            result, box['error'] = None, exc
        with guard:
            box['result'] = result
            late = box.get('abandoned', False)
            done.set()
        if late and undo is not None and result:
            try:
                undo(result)
            except Exception:
                pass
    threading.Thread(target=run, daemon=True,
                     name='scoped-policies-lock-call').start()
    finished = done.wait(seconds)
    with guard:
        if not finished and not done.is_set():
            box['abandoned'] = True
            raise Silent(f'no answer within {seconds:g} s')
    if 'error' in box:
        raise Silent(str(box['error'])) from box['error']
    return box['result']


def _forget(coord) -> None:
    """Drop the process' coordinator after the lock service failed, so
    that the next boot connects afresh (it stops in the background: a
    silent server must not hold the boot)."""
    global _coordinator
    with _coordinator_lock:
        if _coordinator is coord:
            _coordinator = None
    if coord is not None:
        threading.Thread(target=_quietly, args=(coord.stop,), daemon=True,
                         name='scoped-policies-lock-stop').start()


def _quietly(call) -> None:
    try:
        call()
    except Exception:
        pass


_coordinator: typing.Union[Coordinator, LocalCoordinator, None] = None
_coordinator_lock = threading.Lock()


def _unreachable(seconds: float) -> exception.NoValidHost:
    return exception.NoValidHost(reason=(
        f'scoped policies: the lock service (coordination backend) did not '
        f'answer within {seconds:g} s; a group with hard scoped policies '
        'is not scheduled without it (fail closed)'))


def coordinator(timeout: typing.Optional[float] = None
                ) -> typing.Union[Coordinator, LocalCoordinator]:
    """The process' coordinator for the configured URL, or this process'
    own locks (:class:`LocalCoordinator`) when none is configured.

    :param timeout: seconds connecting may take (default
        ``coordination_lock_timeout``).
    :raises NoValidHost: the backend cannot be reached in time.
    """
    global _coordinator
    url = CONF.scoped_policies.coordination_backend_url
    if timeout is None:
        timeout = CONF.scoped_policies.coordination_lock_timeout
    with _coordinator_lock:
        if _coordinator is not None and _coordinator.url != url:
            threading.Thread(target=_quietly, args=(_coordinator.stop,),
                             daemon=True).start()
            _coordinator = None
        if not url and _coordinator is None:
            _coordinator = LocalCoordinator()
        if url and _coordinator is None:
            lock_timeout = CONF.scoped_policies.coordination_lock_timeout
            try:
                _coordinator = _within(
                    timeout, lambda: Coordinator(url, lock_timeout),
                    undo=lambda late: late.stop())
            except Silent as exc:
                LOG.error('Scoped policies: the lock service %s cannot be '
                          'reached: %s', _shown(url), exc)
                raise _unreachable(timeout)
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

    Every call to the lock service, connecting included, is bounded:
    all of them together take at most
    ``[scoped_policies] coordination_lock_timeout``.

    :returns: [(name, lock)] held.
    :raises NoValidHost: one was not had within the timeout, or the lock
        service did not answer (those taken are given back: fail closed).
    """
    timeout = CONF.scoped_policies.coordination_lock_timeout
    deadline = time.monotonic() + timeout
    coord = coordinator()
    held = []
    for name in names:
        lock = coord.lock(name)
        left = max(0.1, deadline - time.monotonic())
        try:
            # the driver waits up to ``left`` for a lock another holds;
            # _within bounds a backend that does not answer at all
            acquired = _within(
                left, lambda lock=lock, left=left: lock.acquire(
                    blocking=left),
                undo=lambda _, lock=lock: lock.release())
        except Silent as exc:
            LOG.error('Scoped policies: the lock service %s failed: %s',
                      _shown(coord.url or 'local'), exc)
            _released(held)
            _forget(coord)
            raise _unreachable(timeout)
        if not acquired:
            _released(held)
            raise exception.NoValidHost(reason=(
                f'scoped policies: another scheduler has been deciding for '
                f'this server group or stack for more than {timeout:g} s '
                f'(fail closed)'))
        held.append((name, lock))
    return held


def _released(held: list) -> None:
    timeout = CONF.scoped_policies.coordination_lock_timeout
    for name, lock in reversed(held):
        try:
            _within(timeout, lock.release)
        except Silent as exc:  # the backend expires it anyway
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
