"""What tenants may and may not see, and fuzzing of every body.

- no response to a non-admin holds the real uuid of an aggregate of an
  obfuscated or unidentifiable scope, nor a host name;
- audit surrogates are consistent within one response and new in each;
- no body or policy string makes the API answer 5xx (hypothesis).
"""

import json

from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
import pytest
import webob

from tests.functional.api import fixtures as fx

ADMIN = {'X-Project-Id': 'admin-project', 'X-Roles': 'admin'}
A = {'X-Project-Id': fx.PROJECTS['PROJECT_A'], 'X-Roles': 'member'}
B = {'X-Project-Id': fx.PROJECTS['PROJECT_B'], 'X-Roles': 'member'}
AGG = fx.AGGREGATES
I1, I2, I3 = (fx.INSTANCES[i][0] for i in ('I1', 'I2', 'I3'))
G1, G2 = fx.GROUPS['GROUP_1'], fx.GROUPS['GROUP_2']
ZONE_X_FOR_A = fx.environment()['ZONE_X_FOR_A']


class Client:
    def __init__(self, app):
        self.app = app

    def __call__(self, method, path, headers, body=None):
        req = webob.Request.blank(path, method=method, headers=headers)
        if body is not None:
            req.content_type = 'application/json'
            req.body = (body if isinstance(body, bytes)
                        else json.dumps(body).encode())
        resp = req.get_response(self.app)
        return resp.status_code, resp.text


@pytest.fixture(scope='module')
def api():
    fixture = fx.APIFixture()
    fixture.start_fixture()
    call = Client(fx._APP)
    scopes = [
        # unidentifiable
        {'name': 'rack', 'aggregates': [AGG['RACK_A'], AGG['RACK_B']]},
        # identifiable, obfuscated
        {'name': 'zone', 'allow_identifiers': True,
         'obfuscate_identifiers': True,
         'obfuscate_namespace_uuid': fx.NS,
         'aggregates': [AGG['ZONE_X'], AGG['ZONE_Y']]}]
    for scope in scopes:
        assert call('POST', '/os-policy-scopes', ADMIN,
                    {'policy_scope': scope})[0] == 201
    zone_x = fx.environment()['ZONE_X_FOR_A']
    assert call('POST', '/os-server-groups', A, {'server_group': {
        'id': G1, 'policies': ['anti-affinity:rack',
                               f'affinity:zone:{zone_x}']}})[0] == 200
    for member in (I1, I2, I3):
        assert call('POST', f'/os-server-groups/{G1}/action', A, {
            'add_instance': {'instance_id': member}})[0] == 200
    yield call
    fixture.stop_fixture()


TENANT_REQUESTS = [
    ('GET', '/os-policy-scopes', None),
    ('GET', '/os-policy-scopes/rack', None),
    ('GET', '/os-policy-scopes/zone', None),
    ('GET', '/os-server-groups', None),
    ('GET', f'/os-server-groups/{G1}', None),
    ('GET', f'/os-server-groups/{G1}/audit', None),
    ('POST', f'/os-server-groups/{G1}', {'server_group': {'name': 'x'}}),
    ('POST', f'/os-server-groups/{G1}/action',
     {'add_instance': {'instance_id': I1}}),
    ('POST', '/os-policy-scopes/rack/action',
     {'add_aggregate': {'aggregate': AGG['RACK_C']}}),
    ('POST', '/os-server-groups',
     {'server_group': {'id': G2, 'policies': ['affinity:rack:x']}}),
    # stacks that do not fit in the tenant's own zone: the 409 names the
    # zone as the tenant wrote it (#37), at the root and in a nested leaf
    ('POST', '/stacks', {'stack': {'name': 'big', 'group': {
        'name': 'web', 'policies': [f'affinity:zone:{ZONE_X_FOR_A}'],
        'servers': {'count': 4, 'flavor': {'resources': {'VCPU': 6}}}}}}),
    ('POST', '/stacks', {'stack': {'name': 'big', 'group': {
        'name': 'app', 'members': [
            {'name': 'db', 'servers': {'count': 1, 'flavor': {
                'resources': {'VCPU': 1}}}},
            {'name': 'web', 'policies': [f'affinity:zone:{ZONE_X_FOR_A}'],
             'servers': {'count': 4, 'flavor': {
                 'resources': {'VCPU': 6}}}}]}}}),
    ('POST', '/stacks', {'stack': {'name': 'big', 'group': {
        'name': 'web', 'policies': ['anti-affinity:rack'],
        'servers': {'count': 4, 'flavor': {'resources': {'VCPU': 1}}}}}}),
]
STACK_VERSION = {'OpenStack-API-Version': 'scoped-policies 1.2'}


@pytest.mark.parametrize('headers', [A, B], ids=['owner', 'other'])
@pytest.mark.parametrize('method, path, body', TENANT_REQUESTS)
def test_tenants_never_see_real_ids_of_hidden_scopes(api, headers, method,
                                                     path, body):
    if path.startswith('/stacks'):
        headers = dict(headers, **STACK_VERSION)
    status, text = api(method, path, headers, body)
    assert status < 500
    for hidden in (AGG['RACK_A'], AGG['RACK_B'], AGG['RACK_C'],
                   AGG['ZONE_X'], AGG['ZONE_Y']):
        assert hidden not in text, (status, text)
    for host in fx.HOSTS:
        assert f'"{host}"' not in text and f' {host},' not in text


def test_a_stack_that_does_not_fit_names_the_tenants_own_zone(api):
    """The 409 of a stack names the domain in the tenant's identifier,
    in a nested leaf too (#37: it named the real aggregate)."""
    for request in TENANT_REQUESTS[-3:-1]:
        status, text = api('POST', '/stacks', dict(A, **STACK_VERSION),
                           request[2])
        assert status == 409, text
        detail = json.loads(text)['errors'][0]['detail']
        assert f'affinity:zone:{ZONE_X_FOR_A} cannot be met' in detail


def _audit(api, headers):
    status, text = api('GET', f'/os-server-groups/{G1}/audit', headers)
    assert status == 200
    return {m['instance_id']: m['placements'] for m in json.loads(text)[
        'server_group_policy_audit']['members']}


def test_surrogates_are_consistent_within_a_response_and_new_in_each(api):
    first, second = _audit(api, A), _audit(api, A)
    for audit in (first, second):
        # I1 and I2 share rack A, I3 is in rack B
        assert audit[I1]['rack'] == audit[I2]['rack'] != audit[I3]['rack']
    assert first[I1]['rack'] != second[I1]['rack']
    # the identifiable zone keeps the tenant's stable identifier
    assert first[I1]['zone'] == second[I1]['zone'] == \
        fx.environment()['ZONE_X_FOR_A']


def test_the_admin_sees_the_real_placements(api):
    audit = _audit(api, ADMIN)
    assert audit[I1] == {'rack': AGG['RACK_A'], 'zone': AGG['ZONE_X']}
    assert audit[I3] == {'rack': AGG['RACK_B'], 'zone': AGG['ZONE_X']}


# the classes of issue #12's fuzzer: other digits, huge numbers, control
# characters and lone surrogates, besides ordinary values
ODD_TEXT = st.sampled_from(['\u00b2', '9' * 5000, '\ud800', 'a\x00b',
                            '\x1b[0m', 'x' * 300])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers()
    | st.integers(min_value=10 ** 300, max_value=10 ** 400)
    | st.text(max_size=20) | ODD_TEXT,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12)
POLICY = st.one_of(
    st.text(max_size=40),
    st.builds(lambda t, s, i: ':'.join(x for x in (t, s, i) if x),
              st.sampled_from(['affinity', 'anti-affinity', 'soft-affinity',
                               'soft-anti-affinity', 'repel', '']),
              st.sampled_from(['', 'host', 'rack', 'zone', 'nowhere', '::']),
              st.sampled_from(['', AGG['ZONE_X'], 'x', '1'])))
RULES = st.dictionaries(
    st.sampled_from(['max_server_per_host', 'max_server_per_rack',
                     'min_domains_rack', 'size', 'max_server_per_',
                     'other']),
    st.one_of(st.integers(-2, 5), st.text(max_size=3), st.none(), ODD_TEXT,
              st.integers(min_value=10 ** 300, max_value=10 ** 400)),
    max_size=3)
ROUTES = [('POST', '/os-policy-scopes'),
          ('PUT', '/os-policy-scopes/zone'),
          ('POST', '/os-policy-scopes/zone/action'),
          ('POST', '/os-server-groups'),
          ('POST', f'/os-server-groups/{G1}'),
          ('POST', f'/os-server-groups/{G1}/action')]
FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


@FUZZ
@given(route=st.sampled_from(ROUTES), body=JSON,
       headers=st.sampled_from([A, B]))
def test_no_body_makes_a_5xx(api, route, body, headers):
    method, path = route
    # tenants: nothing they send may break the service or change scopes
    assert api(method, path, headers, body)[0] < 500


@FUZZ
@given(policies=st.lists(POLICY, max_size=4), rules=RULES,
       group=st.sampled_from([G1, G2]))
def test_no_policy_document_makes_a_5xx(api, policies, rules, group):
    body = {'server_group': {'policies': policies, 'rules': rules}}
    assert api('POST', f'/os-server-groups/{G1}', A, body)[0] < 500
    body['server_group']['id'] = group
    assert api('POST', '/os-server-groups', B, body)[0] < 500


@FUZZ
@given(raw=st.binary(max_size=60))
def test_no_raw_bytes_make_a_5xx(api, raw):
    assert api('POST', '/os-server-groups', A, raw)[0] < 500


@FUZZ
@given(depth=st.integers(30, 1200), project=st.sampled_from(
    ['p' * 256, 'project-a']))
def test_deep_bodies_and_long_headers_make_no_5xx(api, depth, project):
    raw = b'{"server_group":' + b'[' * depth + b']' * depth + b'}'
    headers = dict(A, **{'X-Project-Id': project})
    assert api('POST', '/os-server-groups', headers, raw)[0] < 500
