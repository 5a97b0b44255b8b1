"""Versioned notifications of the policy service, through oslo.messaging.

Every change the API stores (a scoped group, a scope, a stack decision), an
audit that finds a violation and a repair send one notification, as nova
sends its own versioned notifications: ``publisher_id``
``nova-scoped-policies-api:<host>``, an ``event_type`` of :data:`EVENTS`,
a payload of :mod:`.payloads`. :class:`Emitter` sends them from a
background thread after the change is stored, so a broker that is down
delays no request and loses no write (``[scoped_policies_notifications]``
says how long it insists). With no ``[oslo_messaging_notifications]
driver`` (the default) nothing is sent and no thread runs.
"""

import logging
import queue
import socket
import threading
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


class Emitter:
    """Sends notifications in the background, in the order emitted.

    :param notifier: an enabled :class:`oslo_messaging.Notifier`, or None
        (nothing is sent).
    :param queue_size: notifications waiting at most; newer ones are
        dropped past that.
    """

    def __init__(self, notifier: typing.Optional[oslo_messaging.Notifier],
                 queue_size: int = 10000) -> None:
        self.notifier = notifier
        self._queue: 'queue.Queue' = queue.Queue(maxsize=queue_size)
        self._dropped = 0
        self._failing = False
        self._thread: typing.Optional[threading.Thread] = None
        if notifier is not None:
            self._thread = threading.Thread(
                target=self._run, name='nsp-notifications', daemon=True)
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
            self._dropped += 1
            if self._dropped == 1 or self._dropped % 1000 == 0:
                LOG.warning('Notifications: %d dropped, the queue of %d '
                            'is full (is the broker reachable?)',
                            self._dropped, self._queue.maxsize)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                self._queue.task_done()
                return
            priority, event_type, body, context = item
            try:
                getattr(self.notifier, priority)(context, event_type, body)
                if self._failing:
                    LOG.info('Notifications: the broker takes them again')
                self._failing = False
            except Exception as exc:   # the sender must outlive any error
                if not self._failing:
                    LOG.warning('Notifications: %s not sent (%s); later '
                                'ones are tried in turn', event_type, exc)
                self._failing = True
            finally:
                self._queue.task_done()

    def flush(self) -> None:
        """Wait until every queued notification was sent or dropped."""
        if self._thread is not None:
            self._queue.join()

    def close(self, timeout: typing.Optional[float] = None) -> None:
        """Send what is queued, then stop the thread.

        :param timeout: seconds to wait for it (None: until done); what
            is not sent by then is dropped with the thread (a daemon).
        """
        if self._thread is not None:
            try:
                self._queue.put(None, timeout=timeout)
            except queue.Full:
                return
            self._thread.join(timeout)
            self._thread = None
