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

nova must send versioned notifications (``[notifications]
notification_format = both`` or ``versioned``, and
``[oslo_messaging_notifications] driver = messagingv2``). While no listener
of this process is bound to its queue (none configured, not started yet, or
unable to start), the forbidden-aggregates request filter reads the
aggregates' ``trait:`` metadata from nova's API database for every request
(:func:`trait_aggregates`), as nova's own ``isolate_aggregates`` does: an
isolation never waits for a refresh interval.

What this module touches of nova beyond its options, checked by
:func:`check` before the seam installs anything: the API database's
aggregate models (:func:`trait_aggregates`) and
``SchedulerManager.graceful_shutdown``, wrapped so that a scheduler that
stops cleanly deletes its queue (:func:`install_shutdown`). A scheduler
that does not stop cleanly leaves its queue to RabbitMQ's expiry policy
(:data:`POLICY`, doc/source/admin/schedulers.rst).
"""

import functools
import os
import socket
import threading
import typing

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_scoped_policies.nova_seam import checks
from nova_scoped_policies import topology as topo

LOG = logging.getLogger(__name__)

EVENTS = ('add_host', 'remove_host', 'update_metadata', 'update_prop',
          'delete')
"""The ``aggregate.<action>`` events that change what the cache holds
(hosts, metadata, name, the aggregate itself); ``update_prop`` is a
rename."""
EVENT_TYPES = r'^aggregate\.(%s)\.end$' % '|'.join(EVENTS)
QUEUE_PREFIX = 'nova-scoped-policies-aggregates'
POLICY = 'nova-scoped-policies-aggregates'
"""The name of the RabbitMQ policy that expires the queues of schedulers
that did not stop cleanly (the devstack plugin sets it)."""
POLICY_PATTERN = r'^nova-scoped-policies-aggregates\.'
POLICY_EXPIRES_MS = 600000
"""The policy's ``expires``: a queue unused for 10 minutes is deleted."""
TRAIT_PREFIX = 'trait:'
SHUTDOWN = 'nova.scheduler.manager.SchedulerManager.graceful_shutdown'
SHUTDOWN_PARAMETERS = ('self', 'timeout')
_MARK = '_nova_scoped_policies_wrapped'
SENDING_DRIVERS = ('messagingv2', 'messaging')
"""oslo.messaging's notification drivers that send over the transport
(``noop``, ``log``, ``test`` and ``routing`` do not)."""


def queue_name(host: typing.Optional[str] = None) -> str:
    """This process' queue: ``nova-scoped-policies-aggregates.<host>.
    <pid>`` (a RabbitMQ policy can expire those of stopped schedulers:
    doc/source/admin/schedulers.rst)."""
    return f'{QUEUE_PREFIX}.{host or socket.gethostname()}.{os.getpid()}'


def check() -> None:
    """Raise :class:`checks.UnknownNova` unless nova's aggregate models
    and ``graceful_shutdown`` are those this module was written for."""
    from nova.db.api import models
    from nova.scheduler import manager
    for model, columns in ((models.Aggregate, ('id', 'uuid', 'name')),
                           (models.AggregateMetadata,
                            ('aggregate_id', 'key', 'value'))):
        for column in columns:
            if not hasattr(model, column):
                raise checks.UnknownNova(
                    f'nova.db.api.models.{model.__name__}.{column} is '
                    f'missing: nova-scoped-policies was written for '
                    f'{checks.WRITTEN_FOR}')
    current = manager.SchedulerManager.__dict__.get('graceful_shutdown')
    checks.expect(SHUTDOWN, getattr(current, _MARK, current),
                  SHUTDOWN_PARAMETERS)


def trait_aggregates(context) -> typing.List[topo.AggregateInfo]:
    """Every aggregate with ``trait:`` metadata, read now from nova's API
    database, each with those keys only (no hosts: the request filter
    forbids aggregates by uuid).

    One query of the rows nova's ``isolate_aggregates`` reads
    (``AggregateList.get_non_matching_by_metadata_keys``), whatever
    their value: :func:`~nova_scoped_policies.engine.
    forbidden_aggregates.index` then judges keys and values as it does
    for the cached copy, so both ways give the same verdicts.

    :param context: an admin request context.
    """
    rows = _trait_rows(context)
    found: typing.Dict[str, topo.AggregateInfo] = {}
    for uuid, name, key, value in rows:
        agg = found.setdefault(uuid, topo.AggregateInfo(uuid, name, (), {}))
        agg.metadata[key] = value
    return list(found.values())


_read = None


def _trait_rows(context):
    """(uuid, name, key, value) of every ``trait:`` metadata row, in one
    reader transaction of nova's API database."""
    global _read
    if _read is None:
        from nova.db.api import api as api_db
        from nova.db.api import models

        @api_db.context_manager.reader
        def read(context):
            meta = models.AggregateMetadata
            return context.session.query(
                models.Aggregate.uuid, models.Aggregate.name, meta.key,
                meta.value).join(
                    meta, meta.aggregate_id == models.Aggregate.id).filter(
                        meta.key.like(TRAIT_PREFIX + '%')).all()
        _read = read
    return _read(context)


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
        self.received += 1
        LOG.debug('%s from %s: the scoped policies aggregate cache reloads '
                  'at the next request', event_type, publisher_id)
        self.changed()

    def changed(self) -> None:
        """Mark the cache stale."""
        from nova_scoped_policies.scheduler import state
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
        # a change made before the queue was bound is in no message: the
        # copy loaded before then is reloaded once
        self.endpoint.changed()
        LOG.info('nova-scoped-policies: aggregate changes reach the '
                 'scheduler from nova\'s versioned notifications (%s on '
                 'queue %s); the forbidden-aggregates filter reads the '
                 'cached aggregates from now on', ', '.join(
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
                      'notifications (%s); the forbidden-aggregates filter '
                      'reads the API database for every request, scopes '
                      'reach the scheduler within [scoped_policies] '
                      'aggregate_refresh_interval', exc)

    def stop(self) -> None:
        """Stop listening and delete this process' queue (a clean stop:
        nothing will read it again)."""
        listener, self._listener = self._listener, None
        if listener is not None and self._pid == os.getpid():
            listener.stop()
            listener.wait()
            delete_queue(listener.transport, self.queue)
            # its connection and kombu's heartbeat thread too
            listener.transport.cleanup()


def delete_queue(transport, queue: str) -> bool:
    """Delete ``queue`` on the transport's RabbitMQ, through a connection
    of the transport's own pool (its TLS and credentials).

    oslo.messaging deletes no notification queue and has no public call
    for it: this uses its RabbitMQ driver's connection. Any failure is
    logged and left to RabbitMQ's expiry policy (:data:`POLICY`).

    :returns: whether the queue was deleted.
    """
    try:
        from oslo_messaging._drivers import common as rpc_common
        from oslo_messaging._drivers import impl_rabbit
        driver = transport._driver
        if not isinstance(driver, impl_rabbit.RabbitDriver):
            LOG.info('nova-scoped-policies: the notification transport is '
                     'not RabbitMQ (%s): queue %s not deleted',
                     type(driver).__name__, queue)
            return False
        with driver._get_connection(rpc_common.PURPOSE_SEND) as context:
            conn = context.connection
            conn.ensure(lambda: conn.channel.queue_delete(queue=queue),
                        retry=2)
    except Exception as exc:
        LOG.warning('nova-scoped-policies: could not delete the aggregate '
                    'notification queue %s (%s): RabbitMQ\'s %s policy '
                    'expires it', queue, exc, POLICY)
        return False
    LOG.info('nova-scoped-policies: aggregate notification queue %s '
             'deleted', queue)
    return True


def _stopping(original, stop: typing.Callable[[], None]):
    """``graceful_shutdown`` that first stops this process' listener."""

    @functools.wraps(original)
    def graceful_shutdown(self, timeout):
        try:
            stop()
        except Exception:
            LOG.exception('nova-scoped-policies: stopping the aggregate '
                          'listener failed')
        return original(self, timeout)

    setattr(graceful_shutdown, _MARK, original)
    return graceful_shutdown


def install_shutdown(stop: typing.Callable[[], None], cls=None) -> None:
    """Make ``cls.graceful_shutdown`` (nova's SchedulerManager: every
    nova-scheduler worker runs it when it stops on SIGTERM) call ``stop``
    first (idempotent)."""
    from nova.scheduler import manager
    cls = cls or manager.SchedulerManager
    current = cls.__dict__['graceful_shutdown']
    if getattr(current, _MARK, None) is None:
        cls.graceful_shutdown = _stopping(current, stop)


def uninstall_shutdown(cls=None) -> None:
    """Put nova's ``graceful_shutdown`` back (tests)."""
    from nova.scheduler import manager
    cls = cls or manager.SchedulerManager
    original = getattr(cls.__dict__['graceful_shutdown'], _MARK, None)
    if original is not None:
        cls.graceful_shutdown = original
