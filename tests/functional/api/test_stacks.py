"""/stacks beyond the gabbi files: the lease reaper, and nothing
half-written when the decision cannot be recorded."""

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


def call(method, path, body=None, headers=A):
    req = webob.Request.blank(path, method=method, headers=dict(
        headers, **{'OpenStack-API-Version': 'scoped-policies 1.1'}))
    if body is not None:
        req.content_type = 'application/json'
        req.body = json.dumps(body).encode()
    resp = req.get_response(fx._APP)
    return resp.status_code, (resp.json if resp.body else None)


def vcpus_used(api):
    placement = api.placement.app.model
    return sum(placement.used(rp)['VCPU'] for rp in placement.providers)


def test_an_expired_lease_is_released_by_the_reaper(api, monkeypatch):
    before = vcpus_used(api)
    status, body = call('POST', '/stacks', STACK)
    assert status == 201, body
    assert vcpus_used(api) == before + 6
    later = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(seconds=61)
    monkeypatch.setattr(handler, "_now", lambda: later)
    # the reaper runs before each /stacks request
    status, body = call('GET', f'/stacks/{body["stack"]["id"]}')
    assert status == 200
    assert {s['state'] for s in body['stack']['servers'].values()} == {
        'released'}
    assert vcpus_used(api) == before


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
