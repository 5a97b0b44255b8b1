"""The policy service's Nova client (keystoneauth1), against a mocked
compute endpoint."""

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
import pytest

from nova_scoped_policies.api import nova
from nova_scoped_policies import errors
from tests.functional.api import fixtures as fx

URL = 'http://compute.invalid/v2.1'


@pytest.fixture
def client():
    return nova.NovaGroups(ks_adapter.Adapter(ks_session.Session(),
                                              endpoint_override=URL))


@pytest.mark.parametrize('status, body, members', [
    (200, {'server_group': {'members': ['i1', 'i2']}}, ['i1', 'i2']),
    (404, {'itemNotFound': {}}, []),
])
def test_members(client, requests_mock, status, body, members):
    requests_mock.get(f'{URL}/os-server-groups/g', status_code=status,
                      json=body)
    assert client.members('g') == members
    assert requests_mock.last_request.headers[
        'OpenStack-API-Version'] == 'compute 2.64'


def test_nova_failing_is_503_naming_the_group(client, requests_mock):
    requests_mock.get(f'{URL}/os-server-groups/g', status_code=500,
                      text='boom')
    with pytest.raises(errors.Unavailable,
                       match='cannot read server group g from Nova: 500'):
        client.members('g')


def test_group(client, requests_mock):
    requests_mock.get(f'{URL}/os-server-groups/g', json={'server_group': {
        'id': 'g', 'project_id': 'p', 'members': []}})
    assert client.group('g')['project_id'] == 'p'
    requests_mock.get(f'{URL}/os-server-groups/x', status_code=404)
    assert client.group('x') is None


def test_not_configured_means_no_client():
    assert nova.NovaGroups.from_conf(fx.make_conf()) is None


@pytest.mark.parametrize('status, body, group', [
    (200, {'server': {'id': 's', 'server_groups': ['g']}}, 'g'),
    (200, {'server': {'id': 's', 'server_groups': []}}, None),
    (404, {'itemNotFound': {}}, None),
])
def test_server_group(client, requests_mock, status, body, group):
    """The group a server was booted into: ``server_groups`` of the
    server, shown from compute microversion 2.71."""
    requests_mock.get(f'{URL}/servers/s', status_code=status, json=body)
    assert client.server_group('s') == group
    assert requests_mock.last_request.headers[
        'OpenStack-API-Version'] == 'compute 2.71'


def test_a_silent_nova_is_503_in_bounded_time():
    """Nova accepts the connection and never answers (a blackholing
    proxy): the call gives up after ``[scoped_policies_api]
    read_timeout`` (#37), with a 503 naming Nova."""
    import threading
    from tests import fault_proxy
    with fault_proxy.FaultProxy(('127.0.0.1', 9)) as proxy:
        proxy.blackhole()
        conf = fx.make_conf(connect_timeout=1, read_timeout=1)
        conf.set_override('auth_type', 'none', group='nova')
        conf.set_override('endpoint_override',
                          f'http://127.0.0.1:{proxy.port}/v2.1',
                          group='nova')
        client = nova.NovaGroups.from_conf(conf)
        found = []

        def read():
            try:
                client.members('g')
            except errors.Unavailable as exc:
                found.append(str(exc))
        reader = threading.Thread(target=read, daemon=True)
        try:
            reader.start()
            reader.join(30)   # the bound; unbounded, never ends
        finally:
            _clear(conf, nova=('auth_type', 'endpoint_override'),
                   scoped_policies_api=('connect_timeout', 'read_timeout'))
        assert not reader.is_alive()
    assert found and 'from Nova' in found[0]


def _clear(conf, **groups):
    """oslo.config shares the overrides of a group object between the
    configurations that register it: take ours back."""
    for group, keys in groups.items():
        for key in keys:
            conf.clear_override(key, group=group)
