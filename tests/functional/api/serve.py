"""A process of the API concurrency suite (test_processes.py).

Run as ``python -m tests.functional.api.serve`` from the repository.
``placement``: a real Placement (in-memory SQLite) seeded with the
world of fixtures.py (hosts, aggregates, instance allocations).
``api STORE_URL PLACEMENT_URL MAX_MEMBERS [CONNECT READ [SWEEP]]``: one
policy API process (noauth2) on a shared store database; its calls to
Placement give up after CONNECT and READ seconds (default: the options'
defaults); with SWEEP, its reaper thread runs every second and sweeps
orphan holds every SWEEP seconds.
``repairs STORE_URL PLACEMENT_URL NOVA_URL PROJECT``: a policy API
process that carries repairs out through Nova at ``NOVA_URL`` (nova's
functional API, whose stubbed keystone trusts the identity headers: an
administrator of ``PROJECT``).

Each prints its URL on one line, then serves until stdin closes.
"""

import sys

from tests.functional.api import fixtures as fx
from tests.functional import wsgi_server


def placement() -> str:
    from placement import deploy as placement_deploy
    from placement.tests.functional.fixtures import placement as fixture
    from nova_scoped_policies.placement import client as pc
    real = fixture.PlacementFixture(use_intercept=False)
    real.setUp()
    # one thread: the in-memory database is one connection
    url = wsgi_server.serve(
        placement_deploy.loadapp(real.conf_fixture.conf), False)
    fx.build_placement(pc.PlacementClient.for_endpoint(url, 'admin'))
    return url


def api(store_url: str, placement_url: str, max_members: str,
        connect: str = '5', read: str = '20', sweep: str = '') -> str:
    from nova_scoped_policies.api import deploy
    from nova_scoped_policies.db import api as store_api
    from nova_scoped_policies.placement import client as pc
    store = store_api.PolicyStore(store_url)
    timeout = (float(connect), float(read))
    reaper = {'stack_reap_interval': 1,
              'stack_sweep_interval': int(sweep)} if sweep else {}
    return wsgi_server.serve(deploy.loadapp(
        fx.make_conf(max_group_members=int(max_members),
                     connect_timeout=timeout[0], read_timeout=timeout[1],
                     **reaper),
        store, pc.PlacementClient.for_endpoint(placement_url, 'admin',
                                               '1.38', timeout),
        reaper=bool(sweep)))


def repairs(store_url: str, placement_url: str, nova_url: str,
            project: str) -> str:
    from keystoneauth1 import adapter as ks_adapter
    from keystoneauth1 import session as ks_session
    from nova_scoped_policies.api import deploy
    from nova_scoped_policies.api import nova
    from nova_scoped_policies.db import api as store_api
    from nova_scoped_policies.placement import client as pc
    from nova_scoped_policies.placement import holds
    http = ks_session.Session()
    http.session.trust_env = False
    compute = ks_adapter.Adapter(http, endpoint_override=nova_url,
                                 additional_headers={
                                     'X-Auth-User': 'admin',
                                     'X-User-Id': 'admin',
                                     'X-Auth-Project-Id': project,
                                     'X-Roles': 'reader,member,admin'})
    return wsgi_server.serve(deploy.loadapp(
        fx.make_conf(), store_api.PolicyStore(store_url),
        pc.PlacementClient.for_endpoint(placement_url, 'admin',
                                        holds.HOLD_VERSION),
        nova=nova.NovaGroups(compute)))


ROLES = {'placement': placement, 'api': api, 'repairs': repairs}

if __name__ == '__main__':
    role, args = sys.argv[1], sys.argv[2:]
    print(ROLES[role](*args), flush=True)
    sys.stdin.read()
