"""Stacks when Placement fails (#37): a policy API process on PostgreSQL,
a real Placement behind a fault-injecting proxy (tests/fault_proxy.py).

The API process gives up on a Placement call after 1 s to connect and
3 s to read (the defaults are 5 and 20), so its requests answer within
the test client's 30 s whatever Placement does; a request that hangs
fails the test with a timeout.
"""

import time
import urllib.parse

import pytest
import requests

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import holds
from tests import db_backends
from tests import fault_proxy
from tests.functional.api import fixtures as fx
from tests.functional.api import test_processes as processes

VERSION = {'OpenStack-API-Version': 'scoped-policies 1.2'}
A = dict(processes.A, **VERSION)
ADMIN = dict(processes.ADMIN, **VERSION)
STACK = {'stack': {'name': 'app', 'lease_seconds': 600, 'group': {
    'name': 'web', 'policies': ['anti-affinity:host'],
    'servers': {'count': 2, 'flavor': {'resources': {'VCPU': 1}}}}}}
CONNECT, READ = 1, 3
DEADLINE = 2 * (CONNECT + READ)
"""A holding decision's deadline in the API process (Holder.deadline)."""
SWEEP = 2
BOUND = 30
"""The issue's bound on an answer when Placement is silent."""


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    url, drop = db_backends.create('postgresql',
                                   str(tmp_path_factory.mktemp('db')))
    store = store_api.PolicyStore(url)
    migration.upgrade(store.engine)
    placement, placement_url = processes._start('placement')
    port = urllib.parse.urlsplit(placement_url).port
    proxy = fault_proxy.FaultProxy(('127.0.0.1', port)).start()
    # its reaper runs each second and sweeps orphan holds every SWEEP s
    api, api_url = processes._start(
        'api', url, f'http://127.0.0.1:{proxy.port}', '3', str(CONNECT),
        str(READ), str(SWEEP))
    http = requests.Session()
    http.trust_env = False
    yield {'api': api_url, 'proxy': proxy, 'store': store, 'http': http,
           'placement': pc.PlacementClient.for_endpoint(
               placement_url, 'admin', holds.HOLD_VERSION)}
    proxy.stop()
    for proc in (api, placement):
        proc.stdin.close()
        proc.wait(timeout=30)
    store.engine.dispose()
    drop()


@pytest.fixture
def world(cloud):
    """Each test starts with Placement passing and no stack."""
    cloud['proxy'].passing()
    yield cloud
    cloud['proxy'].passing()
    for stack in _stacks(cloud):
        _call(cloud, 'DELETE', f'/stacks/{stack["id"]}')


def _call(cloud, method, path, body=None, headers=A):
    resp = cloud['http'].request(method, cloud['api'] + path, json=body,
                                 headers=headers, timeout=BOUND)
    return resp.status_code, (resp.json() if resp.content else None)


def _stacks(cloud):
    status, body = _call(cloud, 'GET', '/stacks')
    assert status == 200, body
    return body['stacks']


def _held(cloud) -> int:
    """Hold consumers of the tenant in Placement (read directly)."""
    usages = cloud['placement'].request(
        'GET', f'/usages?project_id={fx.PROJECTS["PROJECT_A"]}'
        f'&consumer_type={holds.CONSUMER_TYPE}',
        version=holds.HOLD_VERSION).json()['usages']
    return usages.get(holds.CONSUMER_TYPE, {}).get('consumer_count', 0)


def _records(cloud) -> int:
    """Stack records in the database, hidden ones included."""
    import sqlalchemy as sa
    with cloud['store'].engine.connect() as conn:
        return conn.execute(sa.text(
            'SELECT count(*) FROM scoped_stacks')).scalar()


def _error(body) -> str:
    return body['errors'][0]['detail']


def test_a_lost_answer_leaves_no_hold(world):
    """Placement writes the holds, the answer is lost: 503, and the holds
    are given back at once (no capacity held by nothing)."""
    world['proxy'].lose_answer(b'POST /allocations')
    status, body = _call(world, 'POST', '/stacks', STACK)
    assert status == 503, body
    assert 'Placement' in _error(body) and 'nothing is held' in \
        _error(body)
    world['proxy'].passing()
    assert (_held(world), _stacks(world), _records(world)) == (0, [], 0)


def test_a_late_answer_is_released_by_the_reaper(world):
    """Placement writes the holds after the API gave up waiting: the
    record, written first, stays hidden until the reaper releases them."""
    world['proxy'].delay(READ + 2, b'POST /allocations')
    status, body = _call(world, 'POST', '/stacks', STACK)
    assert status == 503, body
    assert 'released within' in _error(body)
    assert _stacks(world) == []
    world['proxy'].passing()
    # the holds landed late; the reaper gives them back once the
    # decision's deadline passed
    _wait(lambda: (_held(world), _records(world)) == (0, 0))
    assert (_held(world), _records(world)) == (0, 0)


def test_holds_whose_record_is_gone_are_swept(world):
    """A hold in Placement no stack record knows (a write that landed
    after its decision was given up, or from a deleted record) is given
    back by the sweep; an instance's allocation with a look-alike uuid
    stays."""
    placement = world['placement']
    provider = placement.list_providers(name='h6')[0]['uuid']
    orphan = holds._consumer()
    instance = holds._consumer()
    placement.request('POST', '/allocations', {
        orphan: {'allocations': {provider: {'resources': {'VCPU': 1}}},
                 'project_id': fx.PROJECTS['PROJECT_A'], 'user_id': 'u',
                 'consumer_generation': None,
                 'consumer_type': holds.CONSUMER_TYPE},
        instance: {'allocations': {provider: {'resources': {'VCPU': 1}}},
                   'project_id': fx.PROJECTS['PROJECT_A'], 'user_id': 'u',
                   'consumer_generation': None,
                   'consumer_type': 'INSTANCE'}},
        version=holds.HOLD_VERSION)
    assert _held(world) == 1
    _wait(lambda: _held(world) == 0)
    assert _held(world) == 0
    assert placement.get_allocations(instance)['allocations']
    placement.request('DELETE', f'/allocations/{instance}')


def _wait(done, seconds=4 * DEADLINE):
    """Poll until ``done()`` (the reaper and the sweep run in the API
    process's own thread), at most ``seconds``."""
    for _ in range(int(seconds / 0.5)):
        if done():
            return
        time.sleep(0.5)


@pytest.mark.parametrize('mode', ['blackhole', 'refuse'])
def test_a_silent_or_gone_placement_answers_503_and_writes_nothing(
        world, mode):
    status, body = _call(world, 'POST', '/stacks', STACK)
    assert status == 201, body
    stack = body['stack']
    held = _held(world)
    getattr(world['proxy'], mode)()
    path = f'/stacks/{stack["id"]}'
    answers = {
        'decide': _call(world, 'POST', '/stacks', STACK),
        'confirm': _call(world, 'POST', path + '/action', {'confirm': None}),
        # as the scheduler does it (its credentials)
        'boot_member': _call(world, 'POST', path + '/action', {
            'boot_member': {'name': sorted(stack['servers'])[0]}}, ADMIN),
        'delete': _call(world, 'DELETE', path),
    }
    assert {what: status for what, (status, _) in answers.items()} == {
        what: 503 for what in answers}
    for _, body in answers.values():
        assert 'Placement' in _error(body)
    # renewing needs nothing of Placement
    assert _call(world, 'POST', path + '/action', {'renew': None})[0] == 200
    world['proxy'].passing()
    # nothing half: the stack as it was, its holds still held
    status, body = _call(world, 'GET', path)
    assert (status, body['stack']['status'],
            {s['state'] for s in body['stack']['servers'].values()}) == (
        200, 'reserved', {'held'})
    assert _held(world) == held
    assert _call(world, 'DELETE', path)[0] == 204
    assert _held(world) == 0


def test_expired_holds_while_placement_is_silent(world):
    """The reaper cannot give back an expired lease: a request that
    changes something answers 503 at its first call that times out (not
    one per expired decision), a read goes on and already says
    ``expired``; once Placement answers, the reaper releases the lease."""
    short = {'stack': dict(STACK['stack'], lease_seconds=1)}
    status, body = _call(world, 'POST', '/stacks', short)
    assert status == 201, body
    path = f'/stacks/{body["stack"]["id"]}'
    world['proxy'].blackhole()
    time.sleep(1.5)    # the lease runs out; no reaper reaches Placement
    status, body = _call(world, 'POST', '/stacks', STACK)
    assert status == 503, body
    assert 'cannot release expired holds' in _error(body)
    status, body = _call(world, 'GET', path)
    assert status == 200 and body['stack']['status'] == 'expired', body
    assert {s['state'] for s in body['stack']['servers'].values()} == {
        'held'}
    world['proxy'].passing()
    _wait(lambda: _held(world) == 0)
    status, body = _call(world, 'GET', path)
    assert status == 200 and body['stack']['status'] == 'expired', body
    assert {s['state'] for s in body['stack']['servers'].values()} == {
        'released'}
    assert _held(world) == 0
