"""Aggregate changes reach running schedulers through nova's versioned
notifications on RabbitMQ, each scheduler on a queue of its own.

A cloud of separate processes (``tests.functional.cloud``: nova-api,
nova-conductor, two nova-scheduler processes, a nova-compute per host,
Placement, PostgreSQL, RabbitMQ) whose nova.conf sends versioned
notifications. Both schedulers keep the aggregates an hour
(``aggregate_refresh_interval = 3600``) and have loaded them (each took
boots) before an operator reserves rack-1 for a trait through nova-api:
each scheduler's listener receives the notification (its log says so),
and the next boots, which both schedulers take (their logs count them),
keep out of rack-1 (``enable_forbidden_aggregates_filter``). Without the
notification their cached copy would still see rack-1 as free for an
hour.

Restarted without listeners (SIGTERM: a clean stop, which deletes each
scheduler's queue), the schedulers read the aggregates' ``trait:``
metadata for every request: the same reservation applies at once.
"""

import subprocess
import time

import pytest

from tests.functional.api import test_notifications as rabbit
from tests.functional import cloud
from tests.functional import test_concurrency as concurrency

RACKS = {'rack-1': ['h11'], 'rack-2': ['h21']}
TIMEOUT = 180
IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
RESERVED = 'CUSTOM_RESERVED'
HEARD = 'aggregate.update_metadata.end from'
LISTENING = "versioned notifications (versioned_notifications on queue"
QUEUE_PREFIX = 'nova-scoped-policies-aggregates.'


@pytest.fixture(scope='module')
def deployed(tmp_path_factory):
    rabbit._rabbit_or_fail()
    yield from cloud.running(
        RACKS, str(tmp_path_factory.mktemp('cloud-logs')), schedulers=2,
        options={'aggregate_refresh_interval': 3600,
                 'enable_forbidden_aggregates_filter': 'true'},
        nova={'notifications': {'notification_format': 'both'},
              'oslo_messaging_notifications': {'driver': 'messagingv2'}})


def _boot(deployed, names):
    ids = [deployed.tenant.post('/servers', json={'server': {
        'name': name, 'imageRef': IMAGE, 'flavorRef': cloud.FLAVOR,
        'networks': 'none'}}).json()['server']['id'] for name in names]
    return concurrency.settle(
        lambda sid: deployed.admin.get(f'/servers/{sid}').json()['server'],
        ids, TIMEOUT, poll=0.2)


def _queues(deployed):
    return subprocess.run(
        ['rabbitmqctl', 'list_queues', '-q', '-p', deployed.vhost, 'name'],
        capture_output=True, text=True, check=True).stdout.split()


def _warm(deployed, prefix):
    """Boot until every scheduler process has taken a boot (and so loaded
    the aggregates) since now."""
    before = deployed.scheduled_by()
    booted = 0
    while not all(count > before[name] for name, count in
                  deployed.scheduled_by().items()):
        assert booted < 40, deployed.scheduled_by()
        _boot(deployed, [f'{prefix}-{booted}', f'{prefix}-{booted + 1}'])
        booted += 2


def _boot_on_every_scheduler(deployed, prefix, batch=8, most=32):
    """Boot ``batch`` servers at a time until every scheduler process
    has taken some of them (``most`` at most): (every server booted, the
    boot requests each scheduler took)."""
    before = deployed.scheduled_by()
    servers = []
    while True:
        servers += _boot(deployed, [f'{prefix}-{len(servers) + i}'
                                    for i in range(batch)])
        took = {n: c - before[n] for n, c in deployed.scheduled_by().items()}
        if all(took.values()) or len(servers) >= most:
            return servers, took


def _wait(what, until):
    deadline = time.monotonic() + TIMEOUT
    while not until():
        assert time.monotonic() < deadline, f'not {what} in {TIMEOUT} s'
        time.sleep(0.5)


def test_every_scheduler_hears_an_aggregate_change_at_once(deployed):
    schedulers = sorted(n for n in deployed.scheduled_by())
    for name in schedulers:
        assert 'nova seam installed' in deployed.log(name)
    # both schedulers take boots, and so load the aggregates and start
    # listening, before the change
    _warm(deployed, 'warm')
    for name in schedulers:
        _wait(f'{name} listening', lambda: LISTENING in deployed.log(name))
        assert 'isolation mode notifications' in deployed.log(name)
    # each scheduler process listens on a queue of its own
    queues = _queues(deployed)
    ours = sorted(q.split('.')[1] for q in queues
                  if q.startswith(QUEUE_PREFIX))
    assert ours == schedulers, queues

    rack1 = next(a for a in deployed.admin.get('/os-aggregates').json()[
        'aggregates'] if a['name'] == 'rack-1')
    deployed.admin.post(f'/os-aggregates/{rack1["id"]}/action', json={
        'set_metadata': {'metadata': {f'trait:{RESERVED}': 'required'}}})
    for name in schedulers:
        _wait(f'heard by {name}', lambda: HEARD in deployed.log(name))

    # both schedulers take some of the next boots (RabbitMQ hands the
    # scheduler topic's requests round the consumers), and every boot
    # keeps out of rack-1
    servers, took = _boot_on_every_scheduler(deployed, 'after')
    hosts = [s['OS-EXT-SRV-ATTR:host'] for s in servers]
    assert all(s['status'] == 'ACTIVE' for s in servers), [
        (s['status'], s.get('fault', {}).get('message')) for s in servers]
    assert set(hosts) == {'h21'}, (hosts, took)
    assert all(took.values()), f'boot requests per scheduler: {took}'

    # the reservation lifted: the next boots go to rack-1 again (the
    # emptier host), on whichever scheduler
    deployed.admin.post(f'/os-aggregates/{rack1["id"]}/action', json={
        'set_metadata': {'metadata': {f'trait:{RESERVED}': None}}})
    for name in schedulers:
        _wait(f'heard twice by {name}',
              lambda: deployed.log(name).count(HEARD) >= 2)
    hosts = [s['OS-EXT-SRV-ATTR:host'] for s in
             _boot(deployed, ['freed-0', 'freed-1'])]
    assert 'h11' in hosts, hosts


def test_without_the_listener_the_reservation_applies_at_once(deployed):
    """Listeners off: the schedulers stop cleanly (their queues go) and,
    with nothing to tell their cached copy of the change, the
    forbidden-aggregates filter reads the trait metadata for every
    request."""
    deployed.restart_schedulers(aggregate_notifications='false')
    assert not [q for q in _queues(deployed) if q.startswith(QUEUE_PREFIX)]
    for name in deployed.scheduled_by():
        log = deployed.log(name)
        assert 'aggregate notification queue nova-scoped-policies-' \
            f'aggregates.{name}.' in log and ' deleted' in log
        _wait(f'{name} started without a listener',
              lambda: 'isolation mode per-request' in deployed.log(name))
    _warm(deployed, 'control')
    rack1 = next(a for a in deployed.admin.get('/os-aggregates').json()[
        'aggregates'] if a['name'] == 'rack-1')
    deployed.admin.post(f'/os-aggregates/{rack1["id"]}/action', json={
        'set_metadata': {'metadata': {f'trait:{RESERVED}': 'required'}}})
    hosts = [s['OS-EXT-SRV-ATTR:host'] for s in
             _boot(deployed, [f'read-{i}' for i in range(4)])]
    assert set(hosts) == {'h21'}, hosts
