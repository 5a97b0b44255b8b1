"""One serialisation point across schedulers for hard scoped policies.

Two schedulers (or two requests of one scheduler) deciding at the same time
for one server group each see the members the other has not claimed yet, so
both may pass ``anti-affinity:rack``. A request for a group with hard
scoped policies therefore holds the group's lock (:func:`acquired`) from
the start (before the request filters read where the members are) until
nova returns, i.e. after nova has claimed the chosen hosts in Placement;
:mod:`nova_scoped_policies.nova_seam.select_destinations` takes and gives
back the locks around nova's ``select_destinations``. The next holder then
reads those claims (:class:`members.InFlightMemberLocator`). The lock is a
tooz lock when ``[scoped_policies] coordination_backend_url`` names a
backend, which several schedulers need; without one it is a lock of this
process, which serialises the requests of one nova-scheduler process only.

This module touches nothing of nova's but its exception.
"""

import math
import socket
import threading
import time
import typing
import urllib.parse
import uuid
import weakref

from oslo_config import cfg
from oslo_log import log as logging

from nova import exception
from nova_scoped_policies import conf as nsp_conf

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
nsp_conf.register_opts(CONF)

LOCK_PREFIX = b'nova-scoped-policies-group-'


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


def acquired(names: typing.Sequence[str]) -> list:
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
            released(held)
            _forget(coord)
            raise _unreachable(timeout)
        if not acquired:
            released(held)
            raise exception.NoValidHost(reason=(
                f'scoped policies: another scheduler has been deciding for '
                f'this server group or stack for more than {timeout:g} s '
                f'(fail closed)'))
        held.append((name, lock))
    return held


def released(held: list) -> None:
    timeout = CONF.scoped_policies.coordination_lock_timeout
    for name, lock in reversed(held):
        try:
            _within(timeout, lock.release)
        except Silent as exc:  # the backend expires it anyway
            LOG.warning('Scoped policies: could not release the lock of '
                        '%s: %s', name, exc)
