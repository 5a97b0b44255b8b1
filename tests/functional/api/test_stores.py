"""The scheduler's store drivers and their cache.

``http`` runs against the policy API served through wsgi-intercept;
``sql`` reads the same database; both must answer alike.
"""

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
import pytest
import requests
from wsgi_intercept import interceptor

from nova_scoped_policies.db import records
from nova_scoped_policies import policy
from nova_scoped_policies.scheduler import stores
from nova_scoped_policies.scheduler.stores import http
from nova_scoped_policies.scheduler.stores import sql
from tests.functional.api import fixtures as fx
from tests.functional.api import test_visibility as tv

URL = 'http://policy-api.invalid'


def _adapter(headers, url=URL):
    http_session = requests.Session()
    http_session.trust_env = False
    session = ks_session.Session(auth=token_endpoint.Token(url, 'x'),
                                 session=http_session)
    return ks_adapter.Adapter(session, service_type='scoped-policies',
                              additional_headers=headers)


@pytest.fixture(scope='module')
def world():
    fixture = fx.APIFixture()
    fixture.start_fixture()
    call = tv.Client(fx._APP)
    assert call('POST', '/os-policy-scopes', tv.ADMIN, {'policy_scope': {
        'name': 'zone', 'allow_identifiers': True,
        'obfuscate_identifiers': True, 'obfuscate_namespace_uuid': fx.NS,
        'aggregates': [fx.AGGREGATES['ZONE_X']]}})[0] == 201
    # a scope nested in zone (microversion 1.1)
    assert call('POST', '/os-policy-scopes',
                dict(tv.ADMIN, **{'OpenStack-API-Version':
                                  'scoped-policies 1.1'}),
                {'policy_scope': {
                    'name': 'rack', 'parent': 'zone',
                    'aggregates': [fx.AGGREGATES['RACK_A']]}})[0] == 201
    zone_x = fx.environment()['ZONE_X_FOR_A']
    assert call('POST', '/os-server-groups', tv.A, {'server_group': {
        'id': tv.G1, 'policies': [f'affinity:zone:{zone_x}',
                                  'anti-affinity'],
        'rules': {'max_server_per_host': 2}}})[0] == 200
    call('POST', f'/os-server-groups/{tv.G1}/action', tv.A,
         {'add_instance': {'instance_id': tv.I1}})
    intercept = interceptor.RequestsInterceptor(lambda: fx._APP, url=URL)
    intercept.install_intercept()
    yield fixture
    intercept.uninstall_intercept()
    fixture.stop_fixture()


SERVICE = {'X-Project-Id': 'service', 'X-Roles': 'service'}
"""nova-scheduler's user: the service role only (no admin)."""


@pytest.fixture(params=['http', 'http-service', 'sql'])
def driver(request, world):
    if request.param == 'http':
        return http.HttpStore(None, _adapter(tv.ADMIN))
    if request.param == 'http-service':
        return http.HttpStore(None, _adapter(SERVICE))

    class Conf:
        class policy_store:
            connection = str(world.store.engine.url)
            connect_timeout = 5
            max_retries = 1
    return sql.SqlStore(Conf)


def test_drivers_read_scopes_with_real_ids(driver):
    zone, = (s for s in driver.scopes() if s.name == 'zone')
    assert list(zone.aggregates) == [fx.AGGREGATES['ZONE_X']]
    assert zone.obfuscate_namespace_uuid == fx.NS


def test_drivers_read_nested_scopes(driver):
    """``parent`` reaches the scheduler through either driver."""
    found = {s.name: s.parent for s in driver.scopes()}
    assert found == {'zone': None, 'rack': 'zone'}


def test_drivers_read_groups_with_real_ids(driver):
    group = driver.group(tv.G1)
    assert group.project_id == fx.PROJECTS['PROJECT_A']
    assert [str(p) for p in group.document.policies] == [
        f'affinity:zone:{fx.AGGREGATES["ZONE_X"]}', 'anti-affinity:host']
    assert group.document.rules.max_server_per == {'host': 2}
    assert group.members == (tv.I1,)
    assert driver.group(tv.G2) is None
    assert driver.groups() == [group]


def test_http_driver_needs_service_or_admin_credentials(world):
    driver = http.HttpStore(None, _adapter(tv.A))
    with pytest.raises(stores.StoreUnavailable, match='service role'):
        driver.scopes()


def test_http_driver_reports_an_unreachable_api():
    driver = http.HttpStore(None, _adapter(tv.ADMIN,
                                           'http://127.0.0.1:9/'))
    with pytest.raises(stores.StoreUnavailable, match='policy API'):
        driver.group(tv.G1)


class _Answers:
    """A keystoneauth1 Adapter stand-in answering every GET with ``body``
    (a policy API that answers something else than it should)."""

    def __init__(self, body):
        self.body = body

    def request(self, url, method, **kwargs):
        body = self.body

        class Response:
            status_code = 200
            text = ''

            def json(self):
                if isinstance(body, Exception):
                    raise body
                return body
        return Response()


@pytest.mark.parametrize('read, body, where', [
    ('scopes', {'policy_scopes': [{'aggregates': [],
                                   'obfuscate_namespace_uuid': None}]},
     'policy_scopes[0].name: is required'),
    ('scopes', {'policy_scopes': [{
        'name': 'rack', 'aggregates': [], 'obfuscate_namespace_uuid': None,
        'created_at': 'yesterday'}]}, 'policy_scopes'),
    ('scopes', {'scopes': []}, 'policy_scopes'),
    ('groups', {'server_groups': [{'id': 'g'}]}, 'server_groups[0]'),
    ('group', {'server_group': {'id': 'g', 'project_id': 'p',
                                'policies': [], 'rules': {},
                                'members': [7]}},
     'server_group.members[0]'),
    ('group', ValueError('Expecting value'), 'not JSON'),
    ('stack_plan', {'stack': {'id': 'x', 'project_id': 'p', 'document': {},
                              'servers': {'web-1': {'state': 'held'}}}},
     'stack.servers.web-1.host'),
    ('stack_plan', {'stack': {'id': 'x', 'project_id': 'p', 'servers': {}}},
     'stack.document: is required'),
])
def test_http_driver_refuses_answers_of_the_wrong_shape(read, body, where):
    """A malformed answer makes the store unavailable (the scheduler
    fails closed), naming the key; it never escapes as a KeyError."""
    driver = http.HttpStore(None, _Answers(body))
    call = getattr(driver, read)
    with pytest.raises(stores.StoreUnavailable) as err:
        if read == 'group':
            call('g')
        elif read == 'stack_plan':
            call('plan')
        else:
            call()
    assert where in str(err.value) and len(str(err.value)) < 300


class FlakyDriver(stores.PolicyStoreDriver):
    def __init__(self):
        self.up = True
        self.reads = 0
        self.data = {'g': 'stored'}

    def _check(self):
        self.reads += 1
        if not self.up:
            raise stores.StoreUnavailable('down')

    def scopes(self):
        self._check()
        return [{'name': 'zone'}]

    def group(self, uuid):
        self._check()
        return self.data.get(uuid)

    def groups(self):
        return []


def test_cache_keeps_answers_for_the_ttl_and_the_last_one_after():
    now = [0.0]
    flaky = FlakyDriver()
    cache = stores.CachedStore(flaky, lambda: 10, clock=lambda: now[0])
    assert cache.group('g') == 'stored' and cache.group('g') == 'stored'
    assert cache.group('none') is None
    assert flaky.reads == 2
    now[0] = 11
    flaky.up = False
    with pytest.raises(stores.StoreUnavailable) as err:
        cache.group('g')
    assert stores.known(err.value) and err.value.last_known == 'stored'
    with pytest.raises(stores.StoreUnavailable) as err:
        cache.group('none')
    assert stores.known(err.value) and err.value.last_known is None
    with pytest.raises(stores.StoreUnavailable) as err:
        cache.group('never-read')
    assert not stores.known(err.value)
    # scopes: the last copy, or none at all
    assert cache.scopes() == []
    flaky.up = True
    assert cache.scopes() == [{'name': 'zone'}]
    flaky.up = False
    now[0] = 30
    assert cache.scopes() == [{'name': 'zone'}]


def test_forget_sends_the_next_reads_to_the_driver():
    flaky = FlakyDriver()
    cache = stores.CachedStore(flaky, lambda: 3600, clock=lambda: 0.0)
    cache.group('g')
    cache.scopes()
    cache.group('g')
    assert flaky.reads == 2          # one group, one scopes read
    cache.forget()
    cache.group('g')
    assert flaky.reads == 3
    # a store that went away after forget(): nothing is known any more
    flaky.up = False
    cache.forget()
    with pytest.raises(stores.StoreUnavailable) as err:
        cache.group('g')
    assert not stores.known(err.value)


def test_remember_answers_as_a_read_would_until_the_ttl():
    now = [0.0]
    flaky = FlakyDriver()
    cache = stores.CachedStore(flaky, lambda: 10, clock=lambda: now[0])
    written = records.GroupRecord(
        '00000000-0000-4000-8000-0000000000b1', 'p',
        policy.parse_document({'policies': ['anti-affinity:zone']}))
    cache.remember(written)
    assert cache.group(written.uuid) is written
    assert flaky.reads == 0
    now[0] = 11                      # then the driver, as after a read
    assert cache.group(written.uuid) is None
    assert flaky.reads == 1


def test_unknown_driver_is_a_clear_error():
    with pytest.raises(ValueError, match="store_driver: 'nope'"):
        stores.load_driver('nope', None)
