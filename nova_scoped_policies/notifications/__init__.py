"""Versioned notifications of the policy service, through oslo.messaging.

Every change the API stores (a scoped group, a scope, a stack decision), an
audit that finds a violation and a repair send one notification, as nova
sends its own versioned notifications: ``publisher_id``
``nova-scoped-policies-api:<host>``, an ``event_type`` of :data:`EVENTS`,
a payload of :mod:`.payloads`. :class:`Emitter` sends them from a
background thread after the change is stored, so a broker that is down
delays no request and loses no write. While the broker does not take
them they wait in a bounded queue (``[scoped_policies_notifications]
queue_size``) and are sent, in order, once it does; the outage is logged
once when it starts and once when it ends, with what was dropped (a
broker slow but not down: once when the queue is full and once when the
sender caught up). A silent or slow broker is down once oslo.messaging's
bounds pass: kombu's connect timeout for a connection,
``[oslo_messaging_rabbit] heartbeat_timeout_threshold`` for a send's
confirm. With no ``[oslo_messaging_notifications] driver`` (the default)
nothing is sent and no thread runs.
"""

import logging
import queue
import socket
import threading
import time
import typing

from oslo_context import context as oslo_context
import oslo_messaging

from nova_scoped_policies.notifications import payloads

LOG = logging.getLogger(__name__)

INFO = 'info'
WARN = 'warn'

EVENTS: typing.Dict[str, typing.Tuple[typing.Type[payloads.Payload], str]] = {
    'scoped_server_group.create': (payloads.ScopedServerGroupPayload, INFO),
    'scoped_server_group.update': (payloads.ScopedServerGroupPayload, INFO),
    'scoped_server_group.delete': (payloads.ScopedServerGroupPayload, INFO),
    'scoped_server_group.add_member': (
        payloads.ScopedServerGroupMemberPayload, INFO),
    'scoped_server_group.remove_member': (
        payloads.ScopedServerGroupMemberPayload, INFO),
    'policy_scope.create': (payloads.PolicyScopePayload, INFO),
    'policy_scope.update': (payloads.PolicyScopePayload, INFO),
    'policy_scope.delete': (payloads.PolicyScopePayload, INFO),
    'stack.decide': (payloads.StackPayload, INFO),
    'stack.confirm': (payloads.StackPayload, INFO),
    'stack.expire': (payloads.StackPayload, INFO),
    'stack.delete': (payloads.StackPayload, INFO),
    'scoped_policy.violation': (payloads.ViolationPayload, WARN),
    'scoped_repair.plan': (payloads.RepairPayload, INFO),
    'scoped_repair.apply.start': (payloads.RepairPayload, INFO),
    'scoped_repair.apply.end': (payloads.RepairPayload, INFO),
    'scoped_repair.apply.error': (payloads.RepairPayload, WARN),
}
"""event type -> (its payload class, its priority)."""

PUBLISHER = 'nova-scoped-policies-api'
SENDER = 'nsp-notifications'
"""The name of the sender threads."""
BACKOFF = (1, 15)
"""Seconds between two tries of a notification the broker did not take:
the first, and at most (doubling in between)."""
_DRIVER_LOGGERS = (
    'oslo_messaging.notify.messaging', 'oslo_messaging.notify.notifier',
    'oslo.messaging._drivers.impl_rabbit',
    'oslo_messaging._drivers.impl_rabbit',
    'oslo_messaging._drivers.amqpdriver', 'kombu', 'amqp')
"""Where oslo.messaging and its AMQP libraries log a send that failed."""


HEARTBEAT = 'Rabbit-heartbeat'
"""The name of oslo.messaging's RabbitMQ heartbeat threads: in the policy
API, only the notifications' connection has one."""


class _SenderLog(logging.Filter):
    """oslo.messaging's notifier never raises: a send the broker did not
    take is only logged (an ERROR with a traceback per notification, and
    one per reconnection try), and the connection's heartbeat thread logs
    each of its reconnection tries too. On those threads this filter
    turns such records into DEBUG ones, written only where DEBUG is on,
    and tells the sender the send failed (:meth:`failed`); the sender logs
    the outage once when it starts and once when it ends."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def failed(self) -> typing.Optional[str]:
        return getattr(self.local, 'failed', None)

    def reset(self) -> None:
        self.local.failed = None

    def filter(self, record: logging.LogRecord) -> bool:
        thread = threading.current_thread().name
        if thread not in (SENDER, HEARTBEAT):
            return True
        if thread == SENDER and record.levelno >= logging.ERROR and \
                self.failed() is None:
            exc = record.exc_info[1] if record.exc_info else None
            self.local.failed = str(exc) if exc else record.getMessage()
        if record.levelno >= logging.WARNING:
            record.levelno, record.levelname = logging.DEBUG, 'DEBUG'
            # the logger let it through at its first level; its handlers
            # (oslo.log's have no level) would write it, traceback and all
            return logging.getLogger(record.name).isEnabledFor(
                logging.DEBUG)
        return True


_FILTER = _SenderLog()


def _install_filter() -> None:
    for name in _DRIVER_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


class Emitter:
    """Sends notifications in the background, in the order emitted.

    A notification the broker does not take is kept and tried again
    (back-off :data:`BACKOFF`) until it does; the ones emitted meanwhile
    wait in the queue. One WARNING says when the broker stops taking them
    and one when it takes them again (how long, how many were dropped);
    should the queue fill while the broker takes them (slowly), one
    WARNING says it is full and one how many were dropped once the sender
    caught up;
    oslo.messaging's own error per notification is kept out of the log.

    :param notifier: an enabled :class:`oslo_messaging.Notifier`, or None
        (nothing is sent).
    :param queue_size: notifications waiting at most; newer ones are
        dropped past that (counted, and logged once per outage).
    """

    def __init__(self, notifier: typing.Optional[oslo_messaging.Notifier],
                 queue_size: int = 10000) -> None:
        self.notifier = notifier
        self._queue: 'queue.Queue' = queue.Queue(maxsize=queue_size)
        self.dropped = 0
        """Notifications dropped since the service started."""
        self._dropped_unlogged = 0
        """Dropped since a WARNING last told how many."""
        self._failing_since: typing.Optional[float] = None
        self._closing = threading.Event()
        self._counting = threading.Lock()
        self._thread: typing.Optional[threading.Thread] = None
        if notifier is not None:
            _install_filter()
            self._thread = threading.Thread(
                target=self._run, name=SENDER, daemon=True)
            self._thread.start()

    @classmethod
    def from_conf(cls, conf) -> 'Emitter':
        """From ``[oslo_messaging_notifications]`` and
        ``[scoped_policies_notifications]``."""
        opts = conf.scoped_policies_notifications
        drivers = [d for d in conf.oslo_messaging_notifications.driver
                   if d != 'noop']
        if not drivers:
            return cls(None)
        transport = oslo_messaging.get_notification_transport(conf)
        notifier = oslo_messaging.Notifier(
            transport, publisher_id=f'{PUBLISHER}:{socket.gethostname()}',
            topics=opts.topics, retry=opts.retry)
        return cls(notifier, opts.queue_size)

    @property
    def enabled(self) -> bool:
        return self.notifier is not None

    def emit(self, event_type: str, payload: payloads.Payload,
             context: typing.Optional[oslo_context.RequestContext] = None
             ) -> None:
        """Queue one notification; never blocks, never raises.

        :param event_type: one of :data:`EVENTS`.
        :param payload: its payload (the class :data:`EVENTS` names).
        :param context: the request's context (oslo.messaging sends its
            redacted copy: ids and roles, no token); None for the
            service's own (the lease reaper's).
        """
        if self.notifier is None:
            return
        cls, priority = EVENTS[event_type]
        if not isinstance(payload, cls):
            raise TypeError(f'{event_type} takes a {cls.obj_name()}')
        try:
            self._queue.put_nowait((priority, event_type,
                                    payload.primitive(), context))
        except queue.Full:
            self._drop(1)

    def _drop(self, count: int, closing: bool = False) -> None:
        with self._counting:
            first = self._dropped_unlogged == 0
            self.dropped += count
            self._dropped_unlogged += count
        if first and closing:
            LOG.warning('Notifications: the service stops while the broker '
                        'does not take them; those still queued are dropped')
        elif first:
            LOG.warning('Notifications: the queue of %d is full; newer ones '
                        'are dropped (counted) until it has room again',
                        self._queue.maxsize)

    @property
    def failing(self) -> bool:
        """Whether the broker is not taking notifications now."""
        return self._failing_since is not None

    def _send(self, item) -> typing.Optional[str]:
        """One try; None when sent, else why not."""
        priority, event_type, body, context = item
        _FILTER.reset()
        try:
            getattr(self.notifier, priority)(context, event_type, body)
        except Exception as exc:   # the sender must outlive any error
            return str(exc) or type(exc).__name__
        return _FILTER.failed()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                self._deliver(item)
                if self._queue.empty() and not self.failing:
                    self._caught_up()
            finally:
                self._queue.task_done()

    def _deliver(self, item) -> None:
        """Send ``item``, trying again with back-off while the broker does
        not take it (given up only when the emitter closes)."""
        wait = BACKOFF[0]
        while True:
            if self._closing.is_set() and self.failing:
                self._drop(1, closing=True)
                return
            why = self._send(item)
            if why is None:
                break
            if not self.failing:
                self._failing_since = time.monotonic()
                LOG.warning('Notifications: the broker does not take them '
                            '(%s); they wait, %d at most, and are sent when '
                            'it does', why, self._queue.maxsize)
            self._closing.wait(wait)
            wait = min(wait * 2, BACKOFF[1])
        if self.failing:
            with self._counting:
                dropped, self._dropped_unlogged = self._dropped_unlogged, 0
            LOG.warning('Notifications: the broker takes them again after '
                        '%.0f s; %d dropped meanwhile (the queue was full)',
                        time.monotonic() - self._failing_since, dropped)
            self._failing_since = None

    def _caught_up(self) -> None:
        """The queue is empty: tell what was dropped since the queue was
        full, when the broker took every notification all along (slower
        than they came) or more were dropped after an outage ended."""
        with self._counting:
            dropped, self._dropped_unlogged = self._dropped_unlogged, 0
        if dropped:
            LOG.warning('Notifications: the sender caught up; %d dropped '
                        'meanwhile (the queue was full)', dropped)

    def flush(self) -> None:
        """Wait until every queued notification was sent or dropped."""
        if self._thread is not None:
            self._queue.join()

    def close(self, timeout: typing.Optional[float] = None) -> None:
        """Send what is queued, then stop the thread.

        :param timeout: seconds to wait for it (None: until done); what
            is not sent by then is dropped with the thread (a daemon).
            While the broker does not take them, what is queued is dropped
            at once (counted). The transport is closed after: later
            notifications are not sent.
        """
        if self._thread is not None:
            self._closing.set()
            try:
                self._queue.put(None, timeout=timeout)
            except queue.Full:
                pass
            else:
                self._thread.join(timeout)
            self._thread = None
        if self.notifier is not None:
            # the transport's connections and their heartbeat threads go
            # too (kombu's retry a broker gone for ever, and in an eventlet
            # process their sleeps stall every green thread)
            notifier, self.notifier = self.notifier, None
            notifier.transport.cleanup()
