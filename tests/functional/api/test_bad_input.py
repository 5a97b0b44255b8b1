"""Every bad input answers 4xx naming what is wrong, echoing at most a
short prefix, on every database: the nine causes of 5xx the fuzzer found
(issue #12) and the request size limit."""

import json

import pytest
import webob

from tests import db_backends
from tests.functional.api import fixtures as fx

G = fx.GROUPS['GROUP_1']
HEADERS = {'X-Project-Id': fx.PROJECTS['PROJECT_A'], 'X-Roles': 'member',
           'Content-Type': 'application/json'}


@pytest.fixture(scope='module', params=db_backends.BACKENDS)
def api(request):
    fx.BACKEND = request.param
    fixture = fx.APIFixture()
    fixture.start_fixture()
    status, _ = call('POST', '/os-policy-scopes', raw=json.dumps(
        {'policy_scope': {'name': 'rack', 'aggregates': [
            fx.AGGREGATES['RACK_A']]}}).encode(),
        headers={'X-Project-Id': 'admin', 'X-Roles': 'admin',
                 'Content-Type': 'application/json'})
    assert status == 201
    yield
    fixture.stop_fixture()
    fx.BACKEND = 'sqlite'


def call(method, path, raw=None, headers=HEADERS):
    req = webob.Request.blank(path, method=method, headers=headers)
    if raw is not None:
        req.body = raw
    resp = req.get_response(fx._APP)
    return resp.status_code, resp.json if resp.content_type == \
        'application/json' else resp.text


def group(body: str) -> bytes:
    return ('{"server_group": {"id": "%s", %s}}' % (G, body)).encode()


CASES = [
    ('nested 1,000 deep', b'{"server_group":' + b'[' * 1000 + b']' * 1000
     + b'}', 'body: nested deeper than 32 levels'),
    ('a rule of other digits', group(
        '"policies": ["anti-affinity:rack"], '
        '"rules": {"max_server_per_rack": "\\u00b2"}'),
     'server_group.rules.max_server_per_rack'),
    ('a rule of 5,000 digits', group(
        '"policies": ["anti-affinity:rack"], '
        '"rules": {"max_server_per_rack": "%s"}' % ('9' * 5000)),
     'server_group.rules.max_server_per_rack'),
    ('llmn size 10**400', group(
        '"llmn": {"level1": "rack", "level2": "host", "n": 2}, '
        '"rules": {"size": 1%s}' % ('0' * 400)),
     'server_group.rules.size'),
    ('a lone surrogate in a name', group(
        '"name": "\\ud800", "policies": ["anti-affinity:rack"]'),
     'server_group.name: control characters and lone surrogates'),
    ('a NUL in a name', group(
        '"name": "a\\u0000b", "policies": ["anti-affinity:rack"]'),
     'server_group.name: control characters and lone surrogates'),
]


@pytest.mark.parametrize('name, raw, field', CASES,
                         ids=[c[0] for c in CASES])
def test_bad_bodies_are_400_naming_the_field(api, name, raw, field):
    status, body = call('POST', '/os-server-groups', raw)
    assert status == 400, body
    detail = body['errors'][0]['detail']
    assert field in detail
    assert len(detail) < 300


def test_long_identity_headers_are_400(api):
    status, body = call('POST', '/os-server-groups', group(
        '"policies": ["anti-affinity:rack"]'),
        headers=dict(HEADERS, **{'X-Project-Id': 'p' * 300}))
    assert status == 400
    assert body['errors'][0]['detail'] == ('X-Project-Id: longer than 255 '
                                           'characters')


@pytest.mark.parametrize('path, what', [
    ('/os-policy-scopes/%ff%fe', 'path'),
    ('/os-policy-scopes?as_tenant_id=%ff', 'query')])
def test_a_path_or_query_not_utf8_is_a_json_400(api, path, what):
    status, body = call('GET', path, headers=dict(
        HEADERS, **{'X-Roles': 'admin'}))
    assert status == 400
    assert body['errors'][0]['detail'] == (f'the {what} of the request is '
                                           'not UTF-8')


def test_errors_echo_a_short_prefix_and_bodies_are_limited(api):
    status, body = call('POST', '/os-server-groups', group(
        '"policies": ["%s"]' % ('x' * 100000)))
    assert status == 400
    assert len(body['errors'][0]['detail']) < 300
    status, body = call('POST', '/os-server-groups', group(
        '"name": "%s", "policies": []' % ('x' * 200000)))
    assert status == 413
