"""The aggregate listener's queue on the real RabbitMQ of 127.0.0.1.

Each scheduler process listens on a queue of its own
(``nova-scoped-policies-aggregates.<host>.<pid>``). Binding it marks the
copy stale once (a change made before then is in no message); a
notification nova-api sends reaches it; stopping cleanly deletes the
queue, which oslo.messaging never does. A process that dies leaves its
queue to RabbitMQ's expiry policy (doc/source/admin/schedulers.rst):
:func:`test_the_expiry_policy_applies_to_our_queues` sets it as the
devstack plugin does and reads it back from RabbitMQ.
tests/functional/test_aggregate_notifications.py stops real
nova-scheduler processes with SIGTERM and finds their queues gone.
"""

import subprocess
import threading
import time

from oslo_config import cfg
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts

from nova_scoped_policies.nova_seam import aggregates
from tests.functional.api.test_notifications import vhost  # noqa: F401

TIMEOUT = 60


def _conf(url):
    conf = cfg.ConfigOpts()
    conf.register_opts(messaging_opts.list_opts()[0][1])  # DEFAULT
    aggregates._register(conf)
    for group, options in messaging_opts.list_opts():
        if group != 'DEFAULT' and group != 'oslo_messaging_notifications':
            conf.register_opts(options, group=group)
    conf.register_opt(cfg.StrOpt('host', default='sched-test'))
    conf([], default_config_files=[])
    conf.set_override('transport_url', url)
    conf.set_override('notification_format', 'both', 'notifications')
    conf.set_override('driver', ['messagingv2'],
                      'oslo_messaging_notifications')
    return conf


def _queues(url):
    vhost_name = url.rsplit('/', 1)[1]
    return subprocess.run(
        ['rabbitmqctl', 'list_queues', '-q', '-p', vhost_name, 'name'],
        capture_output=True, text=True, check=True,
        timeout=60).stdout.split()


def _wait(what, until):
    deadline = time.monotonic() + TIMEOUT
    while not until():
        assert time.monotonic() < deadline, f'not {what} in {TIMEOUT} s'
        time.sleep(0.1)


def test_a_clean_stop_deletes_the_queue(vhost):  # noqa: F811
    conf = _conf(vhost)
    changed = []
    endpoint = aggregates.AggregateEvents(lambda: changed.append(1))
    listener = aggregates.Listener(conf, endpoint)
    listener.start()
    try:
        assert listener.running
        assert listener.queue == aggregates.queue_name('sched-test')
        assert listener.queue in _queues(vhost)
        # bound: the copy loaded before is reloaded once
        assert changed == [1]
        notifier = messaging.Notifier(
            messaging.get_notification_transport(conf),
            publisher_id='nova-api:api-1', driver='messagingv2',
            topics=['versioned_notifications'])
        sent = time.monotonic()
        notifier.info({}, 'aggregate.update_metadata.end', {'uuid': 'x'})
        # and one event nova sends that changes no aggregate
        notifier.info({}, 'instance.create.end', {})
        _wait('heard', lambda: endpoint.received == 1)
        lag = time.monotonic() - sent
        assert changed == [1, 1]
        assert lag < TIMEOUT
        notifier.transport.cleanup()
    finally:
        listener.stop()
    assert not listener.running
    assert listener.queue not in _queues(vhost)


def test_a_stop_never_blocks_on_a_queue_already_gone(vhost):  # noqa: F811
    conf = _conf(vhost)
    listener = aggregates.Listener(conf, aggregates.AggregateEvents(
        lambda: None))
    listener.start()
    queue = listener.queue
    subprocess.run(['rabbitmqctl', 'delete_queue', '-p',
                    vhost.rsplit('/', 1)[1], queue], check=True,
                   capture_output=True, timeout=60)
    done = threading.Event()

    def stop():
        listener.stop()
        done.set()
    threading.Thread(target=stop, daemon=True).start()
    assert done.wait(TIMEOUT), 'stop() hung'
    assert queue not in _queues(vhost)


def test_the_expiry_policy_applies_to_our_queues(vhost):  # noqa: F811
    """The policy the devstack plugin sets, as RabbitMQ reports it on a
    queue of ours left behind (a scheduler killed with SIGKILL)."""
    name = vhost.rsplit('/', 1)[1]
    subprocess.run(['rabbitmqctl', 'set_policy', '-p', name,
                    aggregates.POLICY, aggregates.POLICY_PATTERN,
                    f'{{"expires":{aggregates.POLICY_EXPIRES_MS}}}',
                    '--apply-to', 'queues'], check=True,
                   capture_output=True, timeout=60)
    conf = _conf(vhost)
    listener = aggregates.Listener(conf, aggregates.AggregateEvents(
        lambda: None))
    listener.start()
    try:
        def policy():
            rows = subprocess.run(
                ['rabbitmqctl', 'list_queues', '-q', '-p', name, 'name',
                 'policy'], capture_output=True, text=True, check=True,
                timeout=60).stdout.splitlines()
            return dict(row.split('\t', 1) for row in rows if '\t' in row)
        _wait('the policy applied',
              lambda: policy().get(listener.queue) == aggregates.POLICY)
    finally:
        listener.stop()
