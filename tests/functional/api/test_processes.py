"""The policy API keeps its promises with three API processes on one
PostgreSQL or MariaDB database and requests fired in parallel: the member
cap, one group per instance, and no host in two domains of a scope, each
counted over several rounds (0 violations)."""

import concurrent.futures
import itertools
import os
import subprocess
import sys

import pytest
import requests

from tests import db_backends
from tests.functional.api import fixtures as fx
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
PROCESSES = 3
ROUNDS = 5
MAX_MEMBERS = 3
A = {'X-Project-Id': fx.PROJECTS['PROJECT_A'], 'X-Roles': 'member'}
ADMIN = {'X-Project-Id': 'admin', 'X-Roles': 'admin'}


def _start(*args):
    proc = subprocess.Popen(
        [sys.executable, '-m', 'tests.functional.api.serve', *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    url = proc.stdout.readline().strip()
    assert url.startswith('http://'), f'serve.py {args[0]} did not start'
    return proc, url


@pytest.fixture(scope='module', params=['postgresql', 'mysql'])
def cluster(request, tmp_path_factory):
    url, drop = db_backends.create(request.param,
                                   str(tmp_path_factory.mktemp('db')))
    store = store_api.PolicyStore(url)
    migration.upgrade(store.engine)
    store.engine.dispose()
    procs = []
    placement, placement_url = _start('placement')
    procs.append(placement)
    apis = []
    for _ in range(PROCESSES):
        proc, api_url = _start('api', url, placement_url, str(MAX_MEMBERS))
        procs.append(proc)
        apis.append(api_url)
    yield apis
    for proc in procs:
        proc.stdin.close()
        proc.wait(timeout=30)
    drop()


def _fire(apis, calls):
    """Send ``calls`` (method, path, body, headers) at once, spread over
    the processes; return the status codes in order."""
    http = requests.Session()
    http.trust_env = False
    targets = itertools.cycle(apis)

    def one(call):
        method, path, body, headers = call
        return http.request(method, next(targets) + path, json=body,
                            headers=headers, timeout=60).status_code
    with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(one, calls))


def _uuid(n: int) -> str:
    return f'00000000-0000-4000-a000-{n:012d}'


def test_the_member_cap_and_one_group_per_instance(cluster):
    over_cap = in_two = 0
    for r in range(ROUNDS):
        groups = [_uuid(1000 * r + g) for g in range(4)]
        for g in groups:
            assert _fire(cluster, [('POST', '/os-server-groups', {
                'server_group': {'id': g, 'policies': ['anti-affinity']}},
                A)]) == [200]
        # 12 instances at once into one group capped at 3
        instances = [_uuid(1000 * r + 100 + i) for i in range(12)]
        codes = _fire(cluster, [(
            'POST', f'/os-server-groups/{groups[0]}/action',
            {'add_instance': {'instance_id': i}}, A) for i in instances])
        assert set(codes) <= {200, 409}
        members = requests.get(
            f'{cluster[0]}/os-server-groups/{groups[0]}', headers=A,
            timeout=30).json()['server_group']['members']
        over_cap += len(members) > MAX_MEMBERS
        # one instance into three groups at once
        lone = _uuid(1000 * r + 999)
        codes = _fire(cluster, [(
            'POST', f'/os-server-groups/{g}/action',
            {'add_instance': {'instance_id': lone}}, A) for g in groups[1:]])
        in_two += codes.count(200) > 1
    assert (over_cap, in_two) == (0, 0)


def test_no_host_in_two_domains_of_a_scope(cluster):
    overlaps = 0
    for r in range(ROUNDS):
        name = f'rack{r}'
        assert _fire(cluster, [('POST', '/os-policy-scopes', {
            'policy_scope': {'name': name}}, ADMIN)]) == [201]
        # RACK_B and RACK_C share host h4: at most one may be accepted
        codes = _fire(cluster, [(
            'POST', f'/os-policy-scopes/{name}/action',
            {'add_aggregate': {'aggregate': fx.AGGREGATES[agg]}}, ADMIN)
            for agg in ('RACK_B', 'RACK_C', 'RACK_B', 'RACK_C')])
        assert set(codes) <= {200, 409}
        overlaps += codes.count(200) > 1
    assert overlaps == 0


def test_no_group_on_a_deleted_scope_and_no_leak(cluster):
    """A tenant's group targeting a domain of an obfuscated scope, created
    while the admin deletes the scope: either the group was refused or the
    scope stayed; the tenant never sees the real aggregate uuid."""
    import uuid as uuidlib
    from nova_scoped_policies import topology as topo
    real = fx.AGGREGATES['ZONE_X']
    mine = topo.obfuscate(uuidlib.UUID(fx.NS), fx.PROJECTS['PROJECT_A'],
                          real)
    dangling = leaks = 0
    for r in range(ROUNDS):
        name, group = f'zone{r}', _uuid(9000 + r)
        assert _fire(cluster, [('POST', '/os-policy-scopes', {
            'policy_scope': {'name': name, 'allow_identifiers': True,
                             'obfuscate_identifiers': True,
                             'obfuscate_namespace_uuid': fx.NS,
                             'aggregates': [real]}}, ADMIN)]) == [201]
        created, deleted = _fire(cluster, [
            ('POST', '/os-server-groups', {'server_group': {
                'id': group, 'policies': [f'affinity:{name}:{mine}']}}, A),
            ('DELETE', f'/os-policy-scopes/{name}', None, ADMIN)])
        assert created in (200, 400, 409) and deleted in (204, 409)
        http = requests.Session()
        http.trust_env = False
        shown = http.get(f'{cluster[0]}/os-server-groups/{group}',
                         headers=A, timeout=30)
        scope = http.get(f'{cluster[0]}/os-policy-scopes/{name}',
                         headers=ADMIN, timeout=30)
        dangling += shown.status_code == 200 and scope.status_code == 404
        leaks += real in shown.text
        # the next round takes the aggregate again
        http.delete(f'{cluster[0]}/os-server-groups/{group}', headers=A,
                    timeout=30)
        http.delete(f'{cluster[0]}/os-policy-scopes/{name}', headers=ADMIN,
                    timeout=30)
    assert (dangling, leaks) == (0, 0)


RACE_STACKS = 3
STACK_VERSION = {'OpenStack-API-Version': 'scoped-policies 1.2'}


def test_racing_stack_actions_lose_with_409_not_500(cluster):
    """Confirm, boot_member, renew and delete on the same stacks at once,
    spread over the processes (#37: StaleDataError answered 500): each
    answers what it did, or 409 naming the state it found, or 404 when
    the stack was gone before it began."""
    headers = dict(A, **STACK_VERSION)
    http = requests.Session()
    http.trust_env = False
    found = []
    for r in range(2):
        stacks = []
        for n in range(RACE_STACKS):
            resp = http.post(f'{cluster[0]}/stacks', headers=headers,
                             timeout=60, json={'stack': {
                                 'name': f'race{r}{n}', 'group': {
                                     'name': 'web', 'servers': {
                                         'count': 2, 'flavor': {'resources': {
                                             'VCPU': 1}}}}}})
            assert resp.status_code == 201, resp.text
            stacks.append(resp.json()['stack']['id'])
        calls = []
        for n, stack in enumerate(stacks):
            path = f'/stacks/{stack}'
            calls += [
                ('POST', path + '/action', {'confirm': None}, headers),
                # as the scheduler does it (its credentials)
                ('POST', path + '/action', {'boot_member': {
                    'name': 'web-1', 'instance_uuid': _uuid(5000 + n)}},
                 dict(ADMIN, **STACK_VERSION)),
                ('POST', path + '/action', {'renew': None}, headers),
                ('DELETE', path, None, headers)]
        found += _fire_bodies(cluster, calls)
    codes = sorted({code for code, _ in found})
    assert set(codes) <= {200, 204, 404, 409}, found
    for code, detail in found:
        if code == 409:
            assert 'found deleted' in detail, detail
    # every stack is gone and nothing stays held in Placement
    left = http.get(f'{cluster[0]}/stacks', headers=headers, timeout=30)
    assert left.json()['stacks'] == []


def _fire_bodies(apis, calls):
    """As :func:`_fire`, with each answer's error detail."""
    http = requests.Session()
    http.trust_env = False
    targets = itertools.cycle(apis)

    def one(call):
        method, path, body, headers = call
        resp = http.request(method, next(targets) + path, json=body,
                            headers=headers, timeout=60)
        detail = resp.json()['errors'][0]['detail'] \
            if resp.status_code >= 400 else ''
        return resp.status_code, detail
    with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(one, calls))
