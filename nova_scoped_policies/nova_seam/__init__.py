"""The one place nova-scoped-policies touches nova's internals.

nova gives a scheduler plugin two public extension points, host filters
and weighers. What else nova-scoped-policies needs of nova-scheduler lives
here, and nowhere else imports a private nova name:

* :mod:`.request_filters`: our pre-placement request filters in nova's
  list ``nova.scheduler.request_filter.ALL_REQUEST_FILTERS``;
* :mod:`.select_destinations`: ``SchedulerManager.select_destinations``
  serialised per server group with hard scoped policies (the locks of
  :mod:`nova_scoped_policies.scheduler.coordination`), without alternates
  for those groups, and NoValidHost reasons that say why;
* :mod:`.aggregates`: an oslo.messaging listener of nova's versioned
  ``aggregate.*`` notifications, which keeps the aggregate cache fresh,
  its queue deleted when the scheduler stops (``SchedulerManager.
  graceful_shutdown`` wrapped), and the per-request read of the
  aggregates' ``trait:`` metadata while no listener runs;
* :mod:`.objects`: a private attribute read and one direct field write
  on nova's objects, each with its reason;
* :mod:`.simulation`: what the simulator calls of nova's scheduler
  internals.

:func:`install` puts the first three in place, once, when nova-scheduler
starts, if ``[scoped_policies] nova_seam`` is true (the default). The
place: nova-scheduler builds its ``HostManager`` once, in
``SchedulerManager.__init__`` (``Service.create``, before any worker is
forked), and the HostManager constructs every filter and weigher named in
``[filter_scheduler] enabled_filters`` / ``weight_classes``, nova's
documented plugin points; the constructors of ours call :func:`install`.
Listing the classes (``available_filters``, ``all_filters()``) runs no
code that touches nova, and a process without nova's RPC set up (the
simulator, a benchmark, a test building a filter) installs nothing.

Before anything is patched, :func:`check` compares the signatures of
everything the seam wraps or calls by a private name with those of the
nova release it was written for (:data:`checks.WRITTEN_FOR`). A nova that
differs: nothing is patched, one ERROR line says why, boots into groups
with hard scoped policies fail closed with that reason
(:func:`refusal`), and ``nova-scoped-policies-status upgrade check``
fails saying why.
"""

import dataclasses
import threading
import typing

from oslo_config import cfg
from oslo_log import log as logging

from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.nova_seam import checks

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
nsp_conf.register_opts(CONF)

UnknownNova = checks.UnknownNova


@dataclasses.dataclass
class Status:
    """What the seam put in place in this process.

    :ivar installed: the pieces in place (``request_filters: <names>``,
        ``select_destinations``, ``aggregate notifications: <queue>``).
    :ivar refused: why nothing was patched (an unknown nova, or
        ``nova_seam`` false), None when installed or never asked.
    :ivar notes: what runs without the seam's help, and why (e.g. the
        aggregate listener when nova sends no versioned notifications).
    :ivar isolation: how the forbidden-aggregates filter reads the
        aggregates (:data:`PER_REQUEST` or :data:`LISTENED`; None when
        the seam is refused, and the filter is not installed).
    """

    installed: typing.List[str] = dataclasses.field(default_factory=list)
    refused: typing.Optional[str] = None
    notes: typing.List[str] = dataclasses.field(default_factory=list)
    isolation: typing.Optional[str] = None


PER_REQUEST = 'per-request'
"""No aggregate listener: the forbidden-aggregates filter reads the
aggregates' ``trait:`` metadata from the API database for every
request."""
LISTENED = 'notifications'
"""The aggregate listener keeps the cached copy fresh: the
forbidden-aggregates filter reads it, each change one notification's
delivery late (per request until the process' listener is bound)."""
ISOLATION = {
    PER_REQUEST: ('the forbidden-aggregates filter reads the aggregates\' '
                  'trait: metadata from the API database for every '
                  'request (no aggregate listener)'),
    LISTENED: ('the forbidden-aggregates filter reads the cached '
               'aggregates, kept fresh by the aggregate listener of each '
               'scheduling process (each change one notification\'s '
               'delivery late; read for every request until the '
               'process\' listener is bound)'),
}
"""What the start-up log and the status command say of each mode."""


_status = Status()
_lock = threading.Lock()
_listener = None
_logged: typing.Set[str] = set()


def check() -> None:
    """Compare every nova internal the seam touches with what it was
    written for.

    :raises UnknownNova: one differs (the message names it).
    """
    from nova_scoped_policies.nova_seam import aggregates
    from nova_scoped_policies.nova_seam import request_filters
    from nova_scoped_policies.nova_seam import select_destinations
    request_filters.check()
    select_destinations.check()
    aggregates.check()


def _once(level: int, message: str) -> None:
    if message not in _logged:
        _logged.add(message)
        LOG.log(level, message)


def in_nova_service() -> bool:
    """Whether this process is a nova service with its RPC set up (as
    nova-scheduler is once it has parsed nova.conf)."""
    try:
        from nova import rpc
    except ImportError:
        return False
    return rpc.TRANSPORT is not None


def install(conf=CONF, force: bool = False) -> Status:
    """Put the seam in place, once (idempotent; a later call only brings
    our request filters in line with their options).

    :param conf: nova's configuration.
    :param force: install outside a nova service too (tests).
    :returns: what is in place (:func:`status`).
    """
    global _status
    if not force and not in_nova_service():
        return _status
    with _lock:
        if not conf[sched_conf.GROUP_NAME].nova_seam:
            _status = Status(refused=(
                f'[{sched_conf.GROUP_NAME}] nova_seam is false'))
            _once(logging.WARNING, (
                f'nova-scoped-policies: [{sched_conf.GROUP_NAME}] nova_seam '
                'is false: nothing of nova is patched; our filters and '
                'weighers run, boots into groups with hard scoped policies '
                'fail closed'))
            return _status
        try:
            check()
        except UnknownNova as exc:
            _status = Status(refused=str(exc))
            _once(logging.ERROR, (
                f'nova-scoped-policies: nothing of nova is patched: {exc}; '
                'boots into groups with hard scoped policies fail closed'))
            return _status
        from nova_scoped_policies.nova_seam import request_filters
        from nova_scoped_policies.nova_seam import select_destinations
        status = Status()
        status.installed.append(
            'request_filters: ' + (', '.join(request_filters.sync())
                                   or 'none enabled'))
        select_destinations.install()
        status.installed.append('select_destinations')
        _listen(conf, status)
        if _status.installed != status.installed:
            LOG.info('nova-scoped-policies: nova seam installed (%s): %s',
                     checks.WRITTEN_FOR, '; '.join(status.installed))
            if conf[sched_conf.GROUP_NAME][
                    sched_conf.ENABLE_FORBIDDEN_AGGREGATES]:
                LOG.info('nova-scoped-policies: isolation mode %s: %s',
                         status.isolation, ISOLATION[status.isolation])
        _status = status
        return _status


def _listen(conf, status: Status) -> None:
    global _listener
    from nova_scoped_policies.nova_seam import aggregates
    interval = conf[sched_conf.GROUP_NAME].aggregate_refresh_interval
    fallback = (f'aggregate changes reach the scheduler within '
                f'[{sched_conf.GROUP_NAME}] aggregate_refresh_interval '
                f'({interval} s)')
    status.isolation = PER_REQUEST
    if not conf[sched_conf.GROUP_NAME].aggregate_notifications:
        status.notes.append(f'aggregate_notifications is false: {fallback}')
        return
    why_not = aggregates.sends_versioned(conf)
    if why_not is not None:
        status.notes.append(f'{why_not}: {fallback}')
        _once(logging.WARNING, f'nova-scoped-policies: {why_not}: '
              f'{fallback}')
        return
    if _listener is None:
        _listener = aggregates.Listener(conf)
    aggregates.install_shutdown(_stop_listening)
    status.isolation = LISTENED
    status.installed.append(_listening(conf))


def _listening(conf) -> str:
    """What :func:`install` reports of the aggregate listener."""
    from nova_scoped_policies.nova_seam import aggregates
    return ('aggregate notifications: ' + aggregates.queue_name(
        getattr(conf, 'host', None)).rsplit('.', 1)[0]
        + '.<pid> (from the first request of each scheduling process)')


def listening() -> None:
    """Start this process' aggregate listener, once (called by the
    serialised ``select_destinations`` at each request: nova-scheduler
    forks its workers after building the HostManager, and only the
    processes that schedule listen)."""
    if _listener is not None and not _listener.running:
        _listener.start_in_background()


def _stop_listening() -> None:
    if _listener is not None:
        _listener.stop()


def aggregates_listened() -> bool:
    """Whether this process' aggregate listener is bound to its queue
    (then the cached aggregates lag one notification's delivery; else
    they may be up to ``aggregate_refresh_interval`` old)."""
    return _listener is not None and _listener.running


def planned(conf=CONF) -> Status:
    """What :func:`install` puts in place with ``conf`` and the nova
    installed here, without touching nova (the status command)."""
    if not conf[sched_conf.GROUP_NAME].nova_seam:
        return Status(refused=f'[{sched_conf.GROUP_NAME}] nova_seam is false')
    try:
        check()
    except UnknownNova as exc:
        return Status(refused=str(exc))
    from nova_scoped_policies.nova_seam import aggregates
    from nova_scoped_policies.nova_seam import request_filters
    from nova_scoped_policies.scheduler import plugins
    group = conf[sched_conf.GROUP_NAME]
    names = [cls.__name__ for cls in
             plugins.load_classes(request_filters.NAMESPACE)
             if getattr(group, cls.option)]
    found = Status(installed=[
        'request_filters: ' + (', '.join(names) or 'none enabled'),
        'select_destinations'], isolation=PER_REQUEST)
    why_not = aggregates.sends_versioned(conf)
    if not group.aggregate_notifications:
        found.notes.append('aggregate_notifications is false')
    elif why_not is not None:
        found.notes.append(f'no aggregate notifications: {why_not}')
    else:
        found.installed.append(_listening(conf))
        found.isolation = LISTENED
    return found


def status() -> Status:
    """What the seam put in place in this process."""
    return _status


def refusal() -> typing.Optional[str]:
    """Why the seam is not in place (nothing patched), or None."""
    return _status.refused


def uninstall() -> None:
    """Undo :func:`install` (tests)."""
    global _status
    from nova_scoped_policies.nova_seam import aggregates
    from nova_scoped_policies.nova_seam import request_filters
    from nova_scoped_policies.nova_seam import select_destinations
    with _lock:
        request_filters.uninstall()
        select_destinations.uninstall()
        aggregates.uninstall_shutdown()
        if _listener is not None:
            _listener.stop()
        _status = Status()
        _logged.clear()
