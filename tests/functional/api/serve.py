"""A process of the API concurrency suite (test_processes.py).

Run as ``python -m tests.functional.api.serve`` from the repository.
``placement``: a real Placement (in-memory SQLite) seeded with the
world of fixtures.py (hosts, aggregates, instance allocations).
``api STORE_URL PLACEMENT_URL MAX_MEMBERS [CONNECT READ [SWEEP]]``: one
policy API process (noauth2) on a shared store database; its calls to
Placement give up after CONNECT and READ seconds (default: the options'
defaults); with SWEEP, its reaper thread runs every second and sweeps
orphan holds every SWEEP seconds.

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


if __name__ == '__main__':
    role, args = sys.argv[1], sys.argv[2:]
    print(placement() if role == 'placement' else api(*args), flush=True)
    sys.stdin.read()
