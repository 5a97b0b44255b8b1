"""Aggregate changes reach our cache from nova's versioned notifications.

nova-api emits ``aggregate.<action>.end`` versioned notifications when an
operator adds or removes a host, changes an aggregate's metadata or name,
or deletes it (``nova/compute/api.py``, ``nova/objects/aggregate.py``).
:class:`Listener` is an oslo.messaging notification listener on nova's
``[notifications] versioned_notifications_topics``, on a queue of this
process' own (``pool`` = :func:`queue_name`): every scheduler process gets
every event. Each marks the scheduler's aggregate cache stale; the next
request reloads the aggregates once instead of waiting up to
``[scoped_policies] aggregate_refresh_interval``, which stays the fallback
for a lost event, a listener that cannot connect, or a nova that sends
unversioned notifications only.

Nothing of nova's is patched or read here but its configuration options:
nova must send versioned notifications (``[notifications]
notification_format = both`` or ``versioned``, and
``[oslo_messaging_notifications] driver = messagingv2``).
"""

import os
import socket
import threading
import typing

from oslo_log import log as logging
import oslo_messaging as messaging

LOG = logging.getLogger(__name__)

EVENTS = ('add_host', 'remove_host', 'update_metadata', 'update_prop',
          'delete')
"""The ``aggregate.<action>`` events that change what the cache holds
(hosts, metadata, name, the aggregate itself); ``update_prop`` is a
rename."""
EVENT_TYPES = r'^aggregate\.(%s)\.end$' % '|'.join(EVENTS)
QUEUE_PREFIX = 'nova-scoped-policies-aggregates'
SENDING_DRIVERS = ('messagingv2', 'messaging')
"""oslo.messaging's notification drivers that send over the transport
(``noop``, ``log``, ``test`` and ``routing`` do not)."""


def queue_name(host: typing.Optional[str] = None) -> str:
    """This process' queue: ``nova-scoped-policies-aggregates.<host>.
    <pid>`` (a RabbitMQ policy can expire those of stopped schedulers:
    doc/source/admin/schedulers.rst)."""
    return f'{QUEUE_PREFIX}.{host or socket.gethostname()}.{os.getpid()}'


class AggregateEvents:
    """The listener's endpoint: one aggregate event, one stale cache.

    :param changed: called for each event (default: the scheduler's
        shared :class:`RequestStates`' ``aggregates_changed``).
    """

    filter_rule = messaging.NotificationFilter(event_type=EVENT_TYPES)

    def __init__(self, changed: typing.Optional[
            typing.Callable[[], None]] = None) -> None:
        self._changed = changed
        self.received = 0

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        from nova_scoped_policies.scheduler import state
        self.received += 1
        LOG.debug('%s from %s: the scoped policies aggregate cache reloads '
                  'at the next request', event_type, publisher_id)
        (self._changed or state.states().aggregates_changed)()


def _register(conf) -> None:
    """nova's and oslo.messaging's notification options on ``conf``
    (nova-scheduler has them; the status command's conf may not)."""
    import nova.conf.notifications
    from oslo_messaging import opts
    nova.conf.notifications.register_opts(conf)
    for group, options in opts.list_opts():
        if group == 'oslo_messaging_notifications':
            conf.register_opts(options, group=group)


def sends_versioned(conf) -> typing.Optional[str]:
    """None when nova's options make it send versioned notifications,
    else why not."""
    _register(conf)
    fmt = conf.notifications.notification_format
    drivers = conf.oslo_messaging_notifications.driver
    if fmt not in ('both', 'versioned'):
        return (f'[notifications] notification_format is {fmt!r}, not '
                f'"both" or "versioned"')
    if not set(drivers) & set(SENDING_DRIVERS):
        return (f'[oslo_messaging_notifications] driver is '
                f'{",".join(drivers) or "unset"}: nova sends no '
                f'notification over its transport (messagingv2 does)')
    return None


class Listener:
    """The notification listener of this process, started by the seam.

    :param conf: nova's configuration (its notification options and
        transport).
    :param endpoint: what handles the events.
    """

    def __init__(self, conf, endpoint: typing.Optional[
            AggregateEvents] = None) -> None:
        self.conf = conf
        self.endpoint = endpoint or AggregateEvents()
        self.queue: typing.Optional[str] = None
        self._listener = None
        self._pid: typing.Optional[int] = None
        self._starting: typing.Optional[int] = None
        self._guard = threading.Lock()

    @property
    def running(self) -> bool:
        return self._listener is not None and self._pid == os.getpid()

    def start(self) -> None:
        """Listen on a queue of this process' own (idempotent per
        process: a forked worker starts its own)."""
        if self.running:
            return
        transport = messaging.get_notification_transport(self.conf)
        targets = [messaging.Target(topic=topic) for topic in
                   self.conf.notifications.versioned_notifications_topics]
        self.queue = queue_name(getattr(self.conf, 'host', None))
        listener = messaging.get_notification_listener(
            transport, targets, [self.endpoint], executor='threading',
            pool=self.queue)
        listener.start()
        self._listener, self._pid = listener, os.getpid()
        LOG.info('nova-scoped-policies: aggregate changes reach the '
                 'scheduler from nova\'s versioned notifications (%s on '
                 'queue %s)', ', '.join(
                     t.topic for t in targets), self.queue)

    def start_in_background(self) -> None:
        """:meth:`start` in a thread of its own, once per process: a
        broker that is down never holds the request that asked."""
        with self._guard:
            if self._starting == os.getpid():
                return
            self._starting = os.getpid()
        threading.Thread(target=self._start_quietly, daemon=True,
                         name='scoped-policies-aggregate-events').start()

    def _start_quietly(self) -> None:
        try:
            self.start()
        except Exception as exc:
            LOG.error('nova-scoped-policies: cannot listen for aggregate '
                      'notifications (%s); aggregate changes reach the '
                      'scheduler within [scoped_policies] '
                      'aggregate_refresh_interval', exc)

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None and self._pid == os.getpid():
            listener.stop()
            listener.wait()
            # its connection and kombu's heartbeat thread too
            listener.transport.cleanup()
