"""The Placement client built from [placement] options, as our tools do."""

from oslo_config import cfg

from nova_scoped_policies.placement import client as pc
from tests import placement_fixtures as pf


def _from_conf(tmp_path, fixture):
    """A client of ``fixture`` from a [placement] section, as our tools
    make it."""
    path = tmp_path / 'tool.conf'
    path.write_text('[placement]\nauth_type = none\n'
                    f'endpoint_override = {fixture.endpoint}\n')
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[str(path)])
    return pc.PlacementClient.from_conf(conf)


def test_from_conf_loads_keystoneauth_options(tmp_path):
    fixture = pf.FakePlacementFixture()
    fixture.setUp()
    try:
        client = _from_conf(tmp_path, fixture)
        assert client.adapter.service_type == 'placement'
        assert client.check_version() == '1.39'
        client.create_provider('h1', '00000000-0000-4000-8000-000000000001')
        assert client.get_provider(
            '00000000-0000-4000-8000-000000000001')['name'] == 'h1'
    finally:
        fixture.cleanUp()


def test_errors_name_method_path_status_and_detail():
    fixture = pf.FakePlacementFixture()
    fixture.setUp()
    try:
        client = pf.client_for(fixture)
        try:
            client.get_provider('00000000-0000-4000-8000-0000000000ff')
        except pc.PlacementError as exc:
            assert exc.status == 404
            assert str(exc).startswith(
                'GET /resource_providers/00000000-0000-4000-8000-0000000000ff'
                ': 404 No resource provider with uuid')
        else:
            raise AssertionError('no error for a missing provider')
    finally:
        fixture.cleanUp()


def test_keep_connections_for_calls_from_many_threads(tmp_path):
    """keystoneauth1's pools made room for 16 calls at once, its own
    adapter kept (TCP keep-alive and all), never made smaller; 16
    threads call through the client together."""
    from concurrent import futures
    from keystoneauth1 import session as ks_session
    fixture = pf.FakePlacementFixture()
    fixture.setUp()
    try:
        client = _from_conf(tmp_path, fixture)
        client.keep_connections(16)
        adapters = client.adapter.session.session.adapters
        assert {type(a) for a in adapters.values()} == {
            ks_session.TCPKeepAliveAdapter}
        assert {a._pool_maxsize for a in adapters.values()} == {16}
        client.keep_connections(4)   # never fewer
        assert {a._pool_maxsize for a in adapters.values()} == {16}
        with futures.ThreadPoolExecutor(16) as pool:
            found = list(pool.map(lambda _: client.max_version(),
                                  range(64)))
        assert found == ['1.39'] * 64
    finally:
        fixture.cleanUp()
