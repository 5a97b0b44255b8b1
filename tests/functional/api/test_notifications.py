"""Versioned notifications of the policy API on the real RabbitMQ of
127.0.0.1 (started here when it is down; the tests fail saying so when it
cannot be), read back by an oslo.messaging notification listener, as
Watcher or an operator's consumer reads them.

Every event arrives once, with a payload that validates against its
published schema (:func:`nova_scoped_policies.notifications.payloads.
schemas`), and carries no other project's ids. A broker that is down
delays no request and loses no write.
"""

import collections
import json
import logging
import os
import socket
import subprocess
import tempfile
import threading
import time
import typing
import uuid

import jsonschema
from oslo_config import cfg
import oslo_messaging
from oslo_messaging import opts as messaging_opts
import pytest
import requests
import webob

from nova_scoped_policies import notifications
from tests.functional.api import fixtures as fx

A = {'X-Project-Id': fx.PROJECTS['PROJECT_A'], 'X-Roles': 'member'}
B = {'X-Project-Id': fx.PROJECTS['PROJECT_B'], 'X-Roles': 'member'}
ADMIN = {'X-Project-Id': fx.PROJECTS['ADMIN_PROJECT'], 'X-Roles': 'admin'}
TOPIC = 'nsp_tests'
RABBIT = 'oslo_messaging_rabbit'
STACK = {'stack': {'name': 'app', 'group': {
    'name': 'web', 'policies': ['anti-affinity:rack'],
    'servers': {'count': 2, 'flavor': {'resources': {'VCPU': 1}}}}}}


def _port_open(port: int) -> bool:
    try:
        socket.create_connection(('127.0.0.1', port), timeout=2).close()
        return True
    except OSError:
        return False


def _rabbit_or_fail() -> None:
    """RabbitMQ on 127.0.0.1:5672, started if it is down."""
    if _port_open(5672):
        return
    subprocess.run(['rabbitmq-server', '-detached'], check=False,
                   capture_output=True, timeout=60)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if _port_open(5672):
            return
        time.sleep(1)
    pytest.fail('RabbitMQ is not running on 127.0.0.1:5672 and '
                '"rabbitmq-server -detached" did not start it')


def _ctl(*args) -> None:
    subprocess.run(['rabbitmqctl', *args], check=True, capture_output=True,
                   timeout=60)


@pytest.fixture
def vhost():
    _rabbit_or_fail()
    name = f'nsp-notify-{uuid.uuid4().hex[:12]}'
    _ctl('add_vhost', name)
    _ctl('set_permissions', '-p', name, 'guest', '.*', '.*', '.*')
    yield f'rabbit://guest:guest@127.0.0.1:5672/{name}'
    _ctl('delete_vhost', name)


class Written(logging.Handler):
    """What a log handler of oslo.log writes: it has no level of its own
    (``debug = False`` sets the root logger's, INFO), so it writes every
    record a logger passes on, whatever a filter made of its level."""

    def __init__(self) -> None:
        super().__init__()
        self.records: typing.List[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def loud(self) -> typing.List[logging.LogRecord]:
        return [r for r in self.records if r.levelno >= logging.WARNING]


@pytest.fixture
def written(caplog):
    """Start writing the log as oslo.log would (root logger at INFO)."""
    handler = Written()

    def start() -> Written:
        caplog.set_level(logging.INFO)
        logging.getLogger().addHandler(handler)
        return handler
    yield start
    logging.getLogger().removeHandler(handler)


class Received:
    """An oslo.messaging notification listener on ``TOPIC``."""

    def __init__(self, url: str) -> None:
        self.messages = []
        self.lock = threading.Condition()
        conf = cfg.ConfigOpts()
        conf([], default_config_files=[])
        self.transport = oslo_messaging.get_notification_transport(
            conf, url=url)
        self.listener = oslo_messaging.get_notification_listener(
            self.transport, [oslo_messaging.Target(topic=TOPIC)], [self],
            executor='threading')
        self.listener.start()

    def _got(self, ctxt, publisher_id, event_type, payload, metadata):
        with self.lock:
            self.messages.append((publisher_id, event_type, payload, ctxt))
            self.lock.notify_all()

    info = warn = _got

    def wait(self, count: int, timeout: float = 60):
        deadline = time.monotonic() + timeout
        with self.lock:
            while len(self.messages) < count:
                left = deadline - time.monotonic()
                assert left > 0, (f'{len(self.messages)} of {count} '
                                  f'notifications: {self.messages}')
                self.lock.wait(left)
            return list(self.messages)

    def stop(self):
        self.listener.stop()
        self.listener.wait()
        # its connection and heartbeat thread too (they would outlive the
        # test, in a process nova's tests run in with eventlet after)
        self.transport.cleanup()


def _app(transport_url: str, rabbit=None, **notify):
    """The policy API sending to ``transport_url``; ``notify`` and
    ``rabbit``: options of ``[scoped_policies_notifications]`` and
    ``[oslo_messaging_rabbit]``."""
    conf = fx.make_conf()
    for group, found in messaging_opts.list_opts():
        if group == RABBIT:
            conf.register_opts(found, group=group)
    for key, value in (rabbit or {}).items():
        conf.set_override(key, value, group=RABBIT)
    conf.set_override('driver', ['messagingv2'],
                      group='oslo_messaging_notifications')
    conf.set_override('transport_url', transport_url,
                      group='oslo_messaging_notifications')
    conf.set_override('topics', [TOPIC],
                      group='scoped_policies_notifications')
    for key, value in notify.items():
        conf.set_override(key, value, group='scoped_policies_notifications')
    tmp = tempfile.TemporaryDirectory()
    app, _, placement = fx.fresh_app(tmp.name, conf)
    app.keep = (tmp, placement)
    return app


def call(app, method, path, body=None, headers=A, expect=None):
    req = webob.Request.blank(path, method=method, headers=dict(
        headers, **{'OpenStack-API-Version': 'scoped-policies latest'}))
    if body is not None:
        req.content_type = 'application/json'
        req.body = json.dumps(body).encode()
    resp = req.get_response(app)
    if expect is not None:
        assert resp.status_code == expect, resp.text
    return resp.json if resp.body else None


def _scenario(app):
    """Scopes, stacks, an audit finding a violation, a repair plan, as A
    and B; returns the event types each should send, in order."""
    rack = {'policy_scope': {'name': 'rack', 'aggregates': [
        fx.AGGREGATES['RACK_A']]}}
    call(app, 'POST', '/os-policy-scopes', rack, ADMIN, 201)
    call(app, 'POST', '/os-policy-scopes/rack/action', {
        'add_aggregate': {'aggregate': fx.AGGREGATES['RACK_B']}}, ADMIN, 200)
    call(app, 'POST', '/os-policy-scopes', {'policy_scope': {
        'name': 'zone', 'aggregates': []}}, ADMIN, 201)
    call(app, 'DELETE', '/os-policy-scopes/zone', None, ADMIN, 204)
    a = call(app, 'POST', '/stacks', STACK, A, 201)['stack']
    b = call(app, 'POST', '/stacks', STACK, B, 201)['stack']
    for name, instance in zip(sorted(a['servers']), ('I1', 'I2')):
        call(app, 'POST', f'/stacks/{a["id"]}/action', {'boot_member': {
            'name': name, 'instance_uuid': fx.INSTANCES[instance][0]}},
            ADMIN, 200)
    audit = call(app, 'GET', f'/stacks/{a["id"]}/audit', None, A, 200)
    assert audit['stack_audit']['status'] == 'violated'
    call(app, 'POST', f'/stacks/{b["id"]}/action', {'confirm': None}, B,
         200)
    call(app, 'POST', '/repairs', {'repair': {'stack': a['id']}}, A, 200)
    call(app, 'DELETE', f'/stacks/{b["id"]}', None, B, 204)
    group = fx.GROUPS['GROUP_1']
    call(app, 'POST', '/os-server-groups', {'server_group': {
        'id': group, 'policy': {'name': 'anti-affinity:rack'}}}, A, 200)
    for instance in ('I1', 'I2'):      # both in rack A
        call(app, 'POST', f'/os-server-groups/{group}/action', {
            'add_instance': {'instance_id': fx.INSTANCES[instance][0]}},
            A, 200)
    audit = call(app, 'GET', f'/os-server-groups/{group}/audit', None, A,
                 200)
    assert audit['server_group_policy_audit']['violations']
    call(app, 'POST', f'/os-server-groups/{group}/action', {
        'remove_instance': {'instance_id': fx.INSTANCES['I2'][0]}}, A, 200)
    call(app, 'POST', f'/os-server-groups/{group}', {'server_group': {
        'policy': {'name': 'soft-anti-affinity:rack'}}}, A, 200)
    call(app, 'DELETE', f'/os-server-groups/{group}', None, A, 204)
    return a, b, ['policy_scope.create', 'policy_scope.update',
                  'policy_scope.create', 'policy_scope.delete',
                  'stack.decide', 'stack.decide', 'scoped_policy.violation',
                  'stack.confirm', 'scoped_repair.plan', 'stack.delete',
                  'scoped_server_group.create',
                  'scoped_server_group.add_member',
                  'scoped_server_group.add_member',
                  'scoped_policy.violation',
                  'scoped_server_group.remove_member',
                  'scoped_server_group.update',
                  'scoped_server_group.delete']


def test_every_event_arrives_once_with_a_valid_payload(vhost):
    received = Received(vhost)
    app = _app(vhost)
    try:
        a, b, expected = _scenario(app)
        app.service.notifications.flush()
        got = received.wait(len(expected))
        time.sleep(1)     # nothing more comes
        got = received.messages
    finally:
        app.service.notifications.close(timeout=5)
        received.stop()
    assert [event for _, event, _, _ in got] == expected
    for publisher, event, payload, ctxt in got:
        assert publisher.startswith('nova-scoped-policies-api:')
        cls, _ = notifications.EVENTS[event]
        jsonschema.validate(payload, cls.to_json_schema())
        assert payload['nova_scoped_policies_object.name'] == cls.obj_name()
        assert not ctxt.get('auth_token')
    by_event = collections.defaultdict(list)
    for _, event, payload, ctxt in got:
        by_event[event].append(
            (payload['nova_scoped_policies_object.data'], ctxt))
    decided = {d['project_id']: (d, c) for d, c in by_event['stack.decide']}
    # each project's payload and context carry its own ids, never the other
    for mine, other in (('PROJECT_A', 'PROJECT_B'),
                        ('PROJECT_B', 'PROJECT_A')):
        data, ctxt = decided[fx.PROJECTS[mine]]
        text = json.dumps([data, ctxt])
        assert fx.PROJECTS[other] not in text
        assert (b if mine == 'PROJECT_B' else a)['id'] == data['id']
        assert ctxt['project_id'] == fx.PROJECTS[mine]
    (violation, _), (in_group, _) = by_event['scoped_policy.violation']
    assert (violation['kind'], violation['id']) == ('stack', a['id'])
    assert (in_group['kind'], in_group['id']) == (
        'server_group', fx.GROUPS['GROUP_1'])
    # operators read real identifiers, whoever asked for the audit
    assert fx.AGGREGATES['RACK_A'] in violation['violations'][0]
    assert fx.AGGREGATES['RACK_A'] in in_group['violations'][0]
    (removed, _), = by_event['scoped_server_group.remove_member']
    assert removed['instance_id'] == fx.INSTANCES['I2'][0]
    assert removed['group']['nova_scoped_policies_object.data'][
        'members'] == [fx.INSTANCES['I1'][0]]
    (scope, _), = by_event['policy_scope.update']
    assert scope['aggregates'] == [fx.AGGREGATES['RACK_A'],
                                   fx.AGGREGATES['RACK_B']]


def test_nothing_is_sent_without_a_driver():
    conf = fx.make_conf()
    emitter = notifications.Emitter.from_conf(conf)
    assert not emitter.enabled


def test_a_broker_that_is_down_delays_nothing_and_loses_no_write():
    # a port nobody listens on: every send fails after its retries
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    app = _app(f'rabbit://guest:guest@127.0.0.1:{port}/', retry=2)
    try:
        emitter = app.service.notifications
        for i in range(5):
            call(app, 'POST', '/os-policy-scopes', {'policy_scope': {
                'name': f's{i}', 'aggregates': []}}, ADMIN, 201)
        # no send can succeed (nothing listens on the port), and the
        # sender tries each again until it does: every request returned
        # while its notification was still unsent, so none waited
        assert emitter._queue.unfinished_tasks >= 5, \
            emitter._queue.unfinished_tasks
        assert emitter.dropped == 0
        listed = call(app, 'GET', '/os-policy-scopes', None, ADMIN, 200)
        assert {s['name'] for s in listed['policy_scopes']} >= {
            f's{i}' for i in range(5)}
    finally:
        app.service.notifications.close(timeout=0)


def test_the_published_page_lists_every_event_and_payload():
    page = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'doc',
                        'source', 'admin', 'notifications.rst')
    with open(page, encoding='utf-8') as handle:
        text = handle.read()
    for event, (cls, priority) in notifications.EVENTS.items():
        assert f'``{event}``' in text, event
        assert f'``{cls.obj_name()}``' in text, cls


FAULTS = {
    'refuse': lambda proxy: proxy.refuse(),
    # the broker answers, each packet 6 s late (each way): longer than a
    # connection's handshake may take
    'delay': lambda proxy: proxy.delay(6),
    # the broker accepts connections and never answers
    'blackhole': lambda proxy: proxy.blackhole(),
    # the connections open go silent too, without being cut (a broker
    # frozen, or cut off by the network): a send waits for the broker's
    # confirm up to twice heartbeat_timeout_threshold (60 s by default)
    'freeze': lambda proxy: proxy.blackhole(keep_open=True),
}
"""How the fault proxy breaks the broker, by fault (#37)."""
RABBIT_OPTS = {'freeze': {'heartbeat_timeout_threshold': 10}}
"""``[oslo_messaging_rabbit]`` by fault: the bound of a send on a silent
connection lowered, for a shorter test."""


def _wait_for(what: str, check, timeout: float = 180) -> None:
    """Until ``check()``; fails saying ``what`` did not happen."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f'{what} not within {timeout} s'
        time.sleep(0.1)


class Proxied:
    """The real RabbitMQ of ``vhost`` behind a fault proxy, a listener
    reading it directly, and the policy API sending through the proxy."""

    def __init__(self, vhost: str) -> None:
        from tests import fault_proxy
        # the senders of earlier tests' emitters finish first (they log)
        for thread in threading.enumerate():
            if thread.name == notifications.SENDER:
                thread.join(60)
        self.proxy = fault_proxy.FaultProxy(('127.0.0.1', 5672)).start()
        self.url = vhost.replace('127.0.0.1:5672',
                                 f'127.0.0.1:{self.proxy.port}')
        self.received = Received(vhost)
        self._apps = []

    def app(self, rabbit=None, **notify):
        """The policy API (in this process) sending through the proxy."""
        app = _app(self.url, rabbit=rabbit, **notify)
        self._apps.append((app, rabbit or {}, notify))
        return app

    def names(self) -> typing.List[str]:
        """The names of the scopes notified, as received."""
        return [p['nova_scoped_policies_object.data']['name']
                for _, _, p, _ in self.received.messages]

    def close(self) -> None:
        for app, rabbit, notify in self._apps:
            app.service.notifications.close(timeout=5)
            # oslo.config shares a group's overrides between configurations
            for key in notify:
                app.service.conf.clear_override(
                    key, group='scoped_policies_notifications')
            for key in rabbit:
                app.service.conf.clear_override(key, group=RABBIT)
        self.received.stop()
        self.proxy.stop()


@pytest.fixture
def proxied(vhost):
    broker = Proxied(vhost)
    yield broker
    broker.close()


def _scope(app, name: str) -> None:
    call(app, 'POST', '/os-policy-scopes', {'policy_scope': {
        'name': name, 'aggregates': []}}, ADMIN, 201)


@pytest.mark.parametrize('fault', sorted(FAULTS))
def test_a_broker_outage_is_logged_once_and_what_waited_is_sent(
        proxied, written, fault):
    """The real RabbitMQ behind the fault proxy, refusing connections,
    answering late or accepting them and never answering for a while
    (#37): writes answer and are stored; the log says once that the
    broker does not take notifications and once that it does again, with
    how many were dropped, and no traceback; what waited in the queue
    arrives after the outage, in order."""
    app = proxied.app(rabbit=RABBIT_OPTS.get(fault), retry=0, queue_size=3)
    emitter = app.service.notifications
    _scope(app, 'before')
    proxied.received.wait(1)
    # the broker's confirm reached the sender too (cut before it, the
    # sender would send 'before' again: at least once)
    emitter.flush()
    log = written()
    FAULTS[fault](proxied.proxy)
    _scope(app, 'out0')
    _wait_for(f'the sender finding the broker failing ({fault})',
              lambda: emitter.failing)
    # the sender holds out0; three wait in the queue, one is dropped
    for name in ('out1', 'out2', 'out3', 'out4'):
        _scope(app, name)
    assert emitter.failing
    listed = call(app, 'GET', '/os-policy-scopes', None, ADMIN, 200)
    assert {f'out{i}' for i in range(5)} <= {
        s['name'] for s in listed['policy_scopes']}
    proxied.proxy.passing()
    proxied.received.wait(5, timeout=180)
    _wait_for('the sender taking up again', lambda: not emitter.failing)
    emitter.flush()
    assert proxied.names() == ['before', 'out0', 'out1', 'out2', 'out3']
    loud = log.loud()
    assert [r.getMessage().split(';')[0] for r in loud] == [
        r.getMessage().split(';')[0] for r in loud if
        r.name == notifications.__name__], [r.getMessage() for r in loud]
    messages = [r.getMessage() for r in loud]
    assert len(messages) == 3, messages
    assert messages[0].startswith('Notifications: the broker does not '
                                  'take them')
    assert 'queue of 3 is full' in messages[1]
    assert 'takes them again' in messages[2] and \
        '1 dropped meanwhile' in messages[2]
    # nothing else of a failed send is written: no traceback, no line per
    # notification or reconnection (INFO at most)
    assert not any(r.exc_info for r in log.records)
    debug = [r.getMessage()[:200] for r in log.records
             if r.levelno < logging.INFO]
    assert not debug, debug
    assert emitter.dropped == 1


def test_a_slow_broker_takes_them_late_and_what_is_dropped_is_logged(
        proxied, written):
    """The real RabbitMQ behind the fault proxy, each packet 1 s late each
    way (#37): slow, not down (a connection's handshake and a send's
    confirm come within their bounds). Writes answer and are stored;
    notifications arrive late, in order; those past the queue's size are
    dropped, counted, and logged twice: when the queue is full and, with
    how many, when the sender caught up. No traceback, no outage."""
    app = proxied.app(retry=0, queue_size=3)
    emitter = app.service.notifications
    names = [f'slow{i}' for i in range(8)]
    _scope(app, 'before')
    proxied.received.wait(1)
    emitter.flush()
    log = written()
    proxied.proxy.delay(1, keep_open=True)
    for name in names:
        _scope(app, name)
    listed = call(app, 'GET', '/os-policy-scopes', None, ADMIN, 200)
    assert set(names) <= {s['name'] for s in listed['policy_scopes']}
    # a send takes seconds, the writes milliseconds: one is being sent,
    # three wait, the others are dropped
    assert emitter.dropped >= 1
    sent = len(names) - emitter.dropped
    proxied.received.wait(1 + sent, timeout=180)
    emitter.flush()
    time.sleep(1)     # nothing more comes
    assert proxied.names() == ['before'] + names[:sent]
    loud = log.loud()
    messages = [r.getMessage() for r in loud]
    assert [r.name for r in loud] == [notifications.__name__] * 2, messages
    assert 'queue of 3 is full' in messages[0]
    assert messages[1].startswith('Notifications: the sender caught up; '
                                  f'{emitter.dropped} dropped meanwhile')
    assert not emitter.failing
    # nothing else of a failed send is written: no traceback, no line per
    # notification or reconnection (INFO at most)
    assert not any(r.exc_info for r in log.records)
    debug = [r.getMessage()[:200] for r in log.records
             if r.levelno < logging.INFO]
    assert not debug, debug


def _log_file_lines(path) -> typing.List[str]:
    try:
        with open(path, encoding='utf-8') as handle:
            return handle.read().splitlines()
    except FileNotFoundError:
        return []


@pytest.mark.parametrize('fault', sorted(FAULTS))
def test_the_api_process_rides_out_a_broker_fault(proxied, tmp_path, fault):
    """``nova-scoped-policies-api`` run as an operator runs it (its own
    process, oslo.log to a file, ``debug = false``), sending to the real
    RabbitMQ through the fault proxy (#37): writes over HTTP answer and
    are stored; its log file has one WARNING when the broker stops taking
    notifications, one when the queue is full and one when the broker
    takes them again, with the count dropped, and no traceback; what
    waited arrives after the outage, in order."""
    from tests.functional.api import test_service_cli as cli
    port = cli._free_port()
    log_file = tmp_path / 'api.log'
    rabbit = ''.join(f'{key} = {value}\n'
                     for key, value in RABBIT_OPTS.get(fault, {}).items())
    conf = tmp_path / 'nsp.conf'
    conf.write_text(f"""[DEFAULT]
log_file = {log_file}
debug = false

[policy_store]
connection = sqlite:///{tmp_path}/store.db

[scoped_policies_api]
auth_strategy = noauth2
bind_port = {port}
stack_reap_interval = 0

[oslo_messaging_notifications]
driver = messagingv2
transport_url = {proxied.url}

[scoped_policies_notifications]
topics = {TOPIC}
retry = 0
queue_size = 3

[oslo_messaging_rabbit]
{rabbit}""")
    synced = cli.manage('db', 'sync', '--config-file', str(conf))
    assert synced.returncode == 0, synced.stderr
    server = subprocess.Popen(
        [os.path.join(cli.BIN, 'nova-scoped-policies-api'),
         '--config-file', str(conf)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    api = f'http://127.0.0.1:{port}'
    http = requests.Session()
    http.trust_env = False

    def scope(name):
        # bounded: a write never waits for the broker
        created = http.post(api + '/os-policy-scopes', headers=ADMIN,
                            json={'policy_scope': {'name': name}},
                            timeout=30)
        assert created.status_code == 201, created.text

    def logged(text):
        return any(text in line for line in _log_file_lines(log_file))

    outs = [f'out{i}' for i in range(5)]
    try:
        cli.wait_for(api, server)
        scope('before')
        proxied.received.wait(1)
        FAULTS[fault](proxied.proxy)
        scope('out0')
        _wait_for(f'the log saying the broker does not take them ({fault})',
                  lambda: logged('the broker does not take them'))
        for name in outs[1:]:
            scope(name)
        listed = http.get(api + '/os-policy-scopes', headers=ADMIN,
                          timeout=30).json()
        assert set(outs) <= {s['name'] for s in listed['policy_scopes']}
        proxied.proxy.passing()
        _wait_for('the log saying the broker takes them again',
                  lambda: logged('the broker takes them again'))
        again, = [line for line in _log_file_lines(log_file)
                  if 'the broker takes them again' in line]
        dropped = int(again.split('; ')[1].split()[0])
        assert dropped >= 1, again
        last = outs[len(outs) - dropped - 1]
        _wait_for(f'{last}, the last that waited, arriving',
                  lambda: last in proxied.names())
    finally:
        server.terminate()
        server.wait(timeout=30)
    lines = _log_file_lines(log_file)
    # oslo.log's format: date time pid LEVEL logger [ids] message
    loud = [line for line in lines
            if line.split()[3:4] in (['WARNING'], ['ERROR'], ['CRITICAL'])]
    assert len(loud) == 3, loud
    assert all(f' {notifications.__name__} ' in line for line in loud), loud
    assert 'the broker does not take them' in loud[0]
    assert 'the queue of 3 is full' in loud[1]
    assert loud[2] == again
    assert not [line for line in lines if 'Traceback' in line or
                line.split()[3:4] == ['DEBUG']]
    # at least once: the last notification before the fault may come
    # again (the proxy cut its connection before the broker's confirm
    # reached the sender), and then held the queue's first place
    got = proxied.names()
    got = [name for i, name in enumerate(got) if i == 0 or
           name != got[i - 1]]
    assert got == ['before'] + outs[:len(outs) - dropped], got
