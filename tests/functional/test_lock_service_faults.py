"""Boots when the lock service fails (#37), in the separate-process cloud
(``tests.functional.cloud``: real nova-api, conductor, one scheduler,
two computes) whose scheduler reaches Redis through a loopback proxy
(``tests/fault_proxy.py``) that refuses, delays or blackholes.

With ``coordination_lock_timeout = 4``: a boot into a group with a hard
scoped policy ends in ERROR with a reason naming the lock service (fail
closed: the lock is what keeps the policy across schedulers); a boot
with soft policies only needs no lock and goes ACTIVE; once Redis answers
again, the next hard boot goes ACTIVE. Before #37, with Redis accepting
connections and never answering, the hard boot stayed in BUILD.
"""

import json

import pytest

from tests import fault_proxy
from tests.functional import cloud
from tests.functional import test_concurrency as concurrency
from tests.functional import test_separate_schedulers as separate

RACKS = {'rack-1': ['h11'], 'rack-2': ['h21']}
LOCK_TIMEOUT = 4
SETTLE = 120
"""Seconds a boot may take to end (ACTIVE or ERROR) before the test
fails: generous, the build itself takes a few seconds."""
HARD = {'policies': ['anti-affinity:rack']}
SOFT = {'policies': ['soft-anti-affinity:rack']}


@pytest.fixture(scope='module')
def deployed(tmp_path_factory):
    concurrency._redis_or_fail()
    proxy = fault_proxy.FaultProxy(('127.0.0.1', 6379)).start()
    deployment = cloud.Cloud(
        RACKS, str(tmp_path_factory.mktemp('cloud-logs')), schedulers=1,
        options={'coordination_backend_url':
                 f'redis://127.0.0.1:{proxy.port}',
                 'coordination_lock_timeout': LOCK_TIMEOUT})
    deployment.setUp()
    deployment.proxy = proxy
    try:
        yield deployment
    finally:
        deployment.cleanUp()
        proxy.stop()


def _boot(deployed, name, document):
    """One server into a fresh group with ``document``; the server once
    it is ACTIVE or ERROR (left there: the fake computes have room)."""
    group = deployed.tenant.post('/os-server-groups', json={
        'server_group': {'name': name, 'policy': 'soft-anti-affinity'},
    }).json()['server_group']
    server = deployed.tenant.post('/servers', json={
        'server': {'name': name, 'imageRef': separate.IMAGE,
                   'flavorRef': cloud.FLAVOR, 'networks': 'none'},
        'os:scheduler_hints': {'group': group['id'],
                               'scoped_policies': json.dumps(document)},
    }).json()['server']
    found, = concurrency.settle(
        lambda sid: deployed.admin.get(f'/servers/{sid}').json()['server'],
        [server['id']], SETTLE, poll=0.2)
    return found


@pytest.mark.parametrize('fault', ['refuse', 'blackhole', 'delay'])
def test_hard_boots_fail_closed_soft_ones_go_on_and_all_recover(
        deployed, fault):
    proxy = deployed.proxy
    if fault == 'delay':
        proxy.delay(LOCK_TIMEOUT + 2)
    else:
        getattr(proxy, fault)()
    try:
        hard = _boot(deployed, f'hard-{fault}', HARD)
        soft = _boot(deployed, f'soft-{fault}', SOFT)
    finally:
        proxy.passing()
    assert hard['status'] == 'ERROR', hard
    assert 'lock service' in hard['fault']['message'], hard['fault']
    assert soft['status'] == 'ACTIVE', deployed.log_tail('scheduler-1')
    # Redis answers again: the next hard boot is scheduled
    again = _boot(deployed, f'again-{fault}', HARD)
    assert again['status'] == 'ACTIVE', deployed.log_tail('scheduler-1')
