"""/stacks beyond the gabbi files: the lease reaper and reads that never
write, nothing half-written
when the decision cannot be recorded, a decision's phase, and the audit of
a stack (microversion 1.2)."""

import datetime
import json

import pytest
import webob

from nova_scoped_policies.api.handlers import stacks as handler
from nova_scoped_policies.db import stacks as stack_db
from tests.functional.api import fixtures as fx

A = {'X-Project-Id': fx.PROJECTS['PROJECT_A'], 'X-Roles': 'member'}
STACK = {'stack': {'name': 'app', 'lease_seconds': 60, 'group': {
    'name': 'web', 'policies': ['anti-affinity:host'],
    'servers': {'count': 3, 'flavor': {'resources': {'VCPU': 2}}}}}}


@pytest.fixture
def api():
    fixture = fx.APIFixture()
    fixture.start_fixture()
    yield fixture
    fixture.stop_fixture()


ADMIN = {'X-Project-Id': fx.PROJECTS['ADMIN_PROJECT'], 'X-Roles': 'admin'}
B = {'X-Project-Id': fx.PROJECTS['PROJECT_B'], 'X-Roles': 'member'}


def call(method, path, body=None, headers=A, version='1.1'):
    req = webob.Request.blank(path, method=method, headers=dict(
        headers, **{'OpenStack-API-Version': f'scoped-policies {version}'}))
    if body is not None:
        req.content_type = 'application/json'
        req.body = json.dumps(body).encode()
    resp = req.get_response(fx._APP)
    return resp.status_code, (resp.json if resp.body else None)


def vcpus_used(api):
    placement = api.placement.app.model
    return sum(placement.used(rp)['VCPU'] for rp in placement.providers)


def test_a_read_changes_nothing_a_write_releases_an_expired_lease(
        api, monkeypatch):
    """A GET never writes: past its lease a decision reads ``expired``
    at once and its holds stay in Placement until the reaper, or the next
    request that changes a stack, releases them."""
    before = vcpus_used(api)
    status, body = call('POST', '/stacks', STACK)
    assert status == 201, body
    stack_id = body['stack']['id']
    assert vcpus_used(api) == before + 6
    later = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(seconds=61)
    monkeypatch.setattr(handler, "_now", lambda: later)
    for version in ('1.1', '1.2'):
        call('GET', '/stacks', version=version)
        status, body = call('GET', f'/stacks/{stack_id}', version=version)
        assert status == 200
        assert vcpus_used(api) == before + 6      # nothing released
        assert {s['state'] for s in body['stack']['servers'].values()} == {
            'held'}
    # from 1.2 on the phase tells the lease ran out; 1.1 keeps its words
    assert body['stack']['status'] == 'expired'
    assert call('GET', f'/stacks/{stack_id}')[1]['stack']['status'] == \
        'reserved'
    # a request that changes something releases it first (here one that
    # fails on its own body)
    assert call('POST', '/stacks', {'stack': {}})[0] == 400
    assert vcpus_used(api) == before
    stack = call('GET', f'/stacks/{stack_id}', version='1.2')[1]['stack']
    assert stack['status'] == 'expired'
    assert {s['state'] for s in stack['servers'].values()} == {'released'}


def test_an_expired_lease_is_released_by_the_reaper(api, monkeypatch):
    before = vcpus_used(api)
    status, body = call('POST', '/stacks', STACK)
    assert status == 201, body
    later = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(seconds=61)
    monkeypatch.setattr(handler, "_now", lambda: later)
    service = fx._APP.service
    assert handler.reap(service, stack_db.StackStore(service.store)) == 1
    assert vcpus_used(api) == before
    stack = call('GET', f'/stacks/{body["stack"]["id"]}',
                 version='1.2')[1]['stack']
    assert stack['status'] == 'expired'
    assert {s['state'] for s in stack['servers'].values()} == {'released'}


def test_nothing_half_written_when_the_record_fails(api, monkeypatch):
    before = vcpus_used(api)

    def broken(self, record):
        raise RuntimeError('database went away')
    monkeypatch.setattr(stack_db.StackStore, 'create', broken)
    status, body = call('POST', '/stacks', STACK)
    assert status == 500
    assert vcpus_used(api) == before      # the hold was given back
    monkeypatch.undo()
    assert call('GET', '/stacks')[1]['stacks'] == []


def test_a_decision_cut_short_is_not_called_infeasible(api, monkeypatch):
    """The limit runs from the request to its answer: when none of it is
    left for the solver (here all of it kept for the hold), the answer is
    409 ``stack_not_found_in_time``, "may still fit", never
    ``stack_infeasible``, and nothing is held or recorded."""
    from nova_scoped_policies.stacks import service
    before = vcpus_used(api)
    monkeypatch.setattr(service, 'HOLD_SHARE', 1.0)
    status, body = call('POST', '/stacks', STACK)
    assert status == 409, body
    [error] = body['errors']
    assert error['code'] == 'scoped_policies.stack_not_found_in_time'
    assert error['detail'].startswith(
        'the stack was not decided: not found within the limit: may still '
        'fit (10 s; ')
    assert 'does not fit' not in error['detail']
    assert vcpus_used(api) == before
    assert call('GET', '/stacks')[1]['stacks'] == []
    monkeypatch.undo()
    status, body = call('POST', '/stacks', STACK)
    assert status == 201, body
    # nothing to improve without soft policies: the first decision
    assert body['stack']['optimal'] is True


RACK_STACK = {'stack': {'name': 'app', 'group': {
    'name': 'web', 'policies': ['anti-affinity:rack'],
    'servers': {'count': 2, 'flavor': {'resources': {'VCPU': 1}}}}}}


def _rack_scope():
    status, body = call('POST', '/os-policy-scopes', {'policy_scope': {
        'name': 'rack', 'aggregates': [fx.AGGREGATES['RACK_A'],
                                       fx.AGGREGATES['RACK_B']]}}, ADMIN)
    assert status == 201, body


def _booted(stack_id, instances):
    """Each server booted as the scheduler tells it (its credentials)."""
    for name, instance in instances.items():
        status, body = call('POST', f'/stacks/{stack_id}/action',
                            {'boot_member': {'name': name,
                                             'instance_uuid': instance}},
                            ADMIN)
        assert status == 200, body
    return body['stack']


def test_the_audit_tells_each_policy_of_a_live_stack(api):
    _rack_scope()
    status, body = call('POST', '/stacks', RACK_STACK, version='1.2')
    assert status == 201, body
    stack = body['stack']
    assert stack['status'] == 'reserved'
    names = sorted(stack['servers'])
    # the decision keeps the racks apart: held, the audit is clean
    status, found = call('GET', f'/stacks/{stack["id"]}/audit',
                         version='1.2')
    assert status == 200, found
    audit = found['stack_audit']
    assert (audit['stack_id'], audit['status']) == (stack['id'], 'ok')
    assert [(p['field'], p['kind'], p['policies'], p['status'])
            for p in audit['policies']] == [
        ('stack.group', 'group', ['anti-affinity:rack'], 'ok')]
    # the servers were booted as instances that share rack A (h1, h2):
    # the stack is live and broken
    stack = _booted(stack['id'], dict(zip(names, (fx.INSTANCES['I1'][0],
                                                  fx.INSTANCES['I2'][0]))))
    assert call('GET', f'/stacks/{stack["id"]}', version='1.2'
                )[1]['stack']['status'] == 'live'
    assert call('GET', f'/stacks/{stack["id"]}')[1]['stack'][
        'status'] == 'reserved'    # 1.1's word for it
    audit = call('GET', f'/stacks/{stack["id"]}/audit',
                 version='1.2')[1]['stack_audit']
    assert audit['status'] == 'violated'
    (policy,) = audit['policies']
    assert policy['status'] == 'violated' and policy['violations']
    # a tenant sees surrogates, never the hosts
    text = json.dumps(audit)
    assert 'h1' not in text and 'h2' not in text
    assert len(set(audit['servers'].values())) == 2
    # an admin sees the hosts
    audit = call('GET', f'/stacks/{stack["id"]}/audit', headers=ADMIN,
                 version='1.2')[1]['stack_audit']
    assert audit['servers'] == dict(zip(names, ('h1', 'h2')))


def test_the_audit_is_a_1_2_route_and_hides_other_tenants(api):
    _rack_scope()
    status, body = call('POST', '/stacks', RACK_STACK, version='1.2')
    assert status == 201, body
    path = f'/stacks/{body["stack"]["id"]}/audit'
    assert call('GET', path)[0] == 404                     # 1.1
    status, found = call('GET', path, headers=B, version='1.2')
    assert status == 404
    assert 'app' not in json.dumps(found)


NOWHERE = '00000000-0000-4000-8000-00000000dead'
CROSS_TENANT = [
    ('GET', '/stacks/{id}', None, '1.1'),
    ('GET', '/stacks/{id}/audit', None, '1.2'),
    ('DELETE', '/stacks/{id}', None, '1.1'),
    ('POST', '/stacks/{id}/action', {'renew': None}, '1.1'),
    ('POST', '/stacks/{id}/action', {'confirm': None}, '1.1'),
    ('POST', '/repairs', {'repair': {'stack': '{id}'}}, '1.2'),
]


@pytest.mark.parametrize('method, path, body, version', CROSS_TENANT)
def test_another_projects_stack_is_answered_as_none(api, method, path, body,
                                                    version):
    """Project B about A's stack: the answer for a stack that does not
    exist, word for word (the id aside); A's stack is untouched."""
    _rack_scope()
    status, created = call('POST', '/stacks', RACK_STACK)
    assert status == 201, created
    mine = created['stack']['id']

    def asked(uuid):
        filled = json.loads(json.dumps(body).replace('{id}', uuid))
        status, answer = call(method, path.replace('{id}', uuid),
                              filled if body is not None else None, B,
                              version)
        errors = [(e['status'], e['title'], e['detail'])
                  for e in answer['errors']]
        return status, json.dumps(errors).replace(uuid, '{id}')
    status, answer = asked(mine)
    assert status == 404, answer
    assert (status, answer) == asked(NOWHERE)
    shown = call('GET', f'/stacks/{mine}')[1]['stack']
    assert shown['status'] == 'reserved'
    assert shown['expires_at'] == created['stack']['expires_at']


def test_a_tenants_audit_of_a_targeted_domain_is_true(api):
    """A policy on a domain of an obfuscated scope, written with the
    tenant's identifier: kept, the tenant's audit and the admin's agree."""
    status, body = call('POST', '/os-policy-scopes', {'policy_scope': {
        'name': 'zone', 'allow_identifiers': True,
        'obfuscate_identifiers': True, 'obfuscate_namespace_uuid': fx.NS,
        'aggregates': [fx.AGGREGATES['ZONE_X'], fx.AGGREGATES['ZONE_Y']]}},
        ADMIN)
    assert status == 201, body
    zone = fx.environment()['ZONE_X_FOR_A']
    status, body = call('POST', '/stacks', {'stack': {
        'name': 'near', 'group': {
            'name': 'g', 'policies': [f'affinity:zone:{zone}'],
            'servers': {'count': 2, 'flavor': {
                'resources': {'VCPU': 1}}}}}}, version='1.2')
    assert status == 201, body
    stack = body['stack']
    _booted(stack['id'], dict(zip(sorted(stack['servers']), (
        fx.INSTANCES['I1'][0], fx.INSTANCES['I2'][0]))))   # both zone X
    audits = [call('GET', f'/stacks/{stack["id"]}/audit', headers=headers,
                   version='1.2')[1]['stack_audit'] for headers in (A, ADMIN)]
    assert [a['status'] for a in audits] == ['ok', 'ok'], audits
    # each reader sees the policy in its own identifiers
    assert [a['policies'][0]['policies'] for a in audits] == [
        [f'affinity:zone:{zone}'],
        [f'affinity:zone:{fx.AGGREGATES["ZONE_X"]}']]


def test_a_stack_whose_domain_is_gone_is_a_409_not_a_500(api):
    status, body = call('POST', '/os-policy-scopes', {'policy_scope': {
        'name': 'zone', 'allow_identifiers': True,
        'aggregates': [fx.AGGREGATES['ZONE_X'], fx.AGGREGATES['ZONE_Y']]}},
        ADMIN)
    assert status == 201, body
    target = f"affinity:zone:{fx.AGGREGATES['ZONE_X']}"
    status, body = call('POST', '/stacks', {'stack': {
        'name': 'near', 'group': {
            'name': 'g', 'policies': [target],
            'servers': {'count': 1, 'flavor': {
                'resources': {'VCPU': 1}}}}}})
    assert status == 201, body
    stack = body['stack']['id']
    # the domain the stack targets leaves the scope
    status, body = call('POST', '/os-policy-scopes/zone/action', {
        'remove_aggregate': {'aggregate': fx.AGGREGATES['ZONE_X']}}, ADMIN)
    assert status == 200, body
    status, body = call('POST', '/repairs', {'repair': {'stack': stack}},
                        version='1.2')
    assert status == 409, body
    assert 'cannot be read any more' in body['errors'][0]['detail']
    # a repair of everything leaves it out and goes on
    status, body = call('POST', '/repairs', {'repair': {}}, ADMIN,
                        version='1.2')
    assert status == 200, body
    assert body['repair']['status'] == 'nothing to do'
