"""Serve a real Placement and the policy API on loopback for the Heat tests.

Runs in the project's main virtualenv (``.venv``: nova's pins), while the
Heat tests run in ``.venv-heat``; they talk over HTTP as Heat and the
policy service do in a cloud. Prints one JSON line with the endpoints and
the world, then serves until its standard input closes.

World: racks rack-1..rack-3 of two hosts each (8 VCPU, 16384 MB), the
scope ``rack`` over them.
"""

import json
import sys
import tempfile
import threading
from wsgiref import simple_server

from oslo_config import cfg
from placement import deploy as placement_deploy
from placement.tests.functional.fixtures import placement as placement_fix

from nova_scoped_policies.api import deploy
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration
from nova_scoped_policies.placement import client as pc

RACKS = {'rack-1': ['h1', 'h2'], 'rack-2': ['h3', 'h4'],
         'rack-3': ['h5', 'h6']}


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


def _serve(app) -> str:
    server = simple_server.make_server('127.0.0.1', 0, app,
                                       handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f'http://127.0.0.1:{server.server_port}'


def build_racks(placement: pc.PlacementClient) -> dict:
    """The hosts of :data:`RACKS` in Placement, an aggregate per rack;
    rack -> aggregate uuid."""
    aggregates = {}
    for i, (rack, hosts) in enumerate(sorted(RACKS.items()), start=1):
        aggregates[rack] = f'00000000-0000-4000-8000-{i:012d}'
        for host in hosts:
            rp = f'00000000-0000-4000-9000-{int(host[1:]):012d}'
            placement.create_provider(host, rp)
            placement.set_inventory(rp, 0, {'VCPU': {'total': 8},
                                            'MEMORY_MB': {'total': 16384}})
            placement.set_aggregates(rp, 1, [aggregates[rack]])
    return aggregates


def main() -> int:
    fixture = placement_fix.PlacementFixture(use_intercept=False)
    fixture.setUp()
    placement_url = _serve(placement_deploy.loadapp(fixture.conf_fixture.conf))
    placement = pc.PlacementClient.for_endpoint(placement_url, 'admin',
                                                '1.38')
    aggregates = build_racks(placement)
    tmp = tempfile.TemporaryDirectory()
    store = store_api.PolicyStore(f'sqlite:///{tmp.name}/store.db')
    migration.upgrade(store.engine)
    store.create_scope('rack', aggregates=sorted(aggregates.values()))
    conf = cfg.ConfigOpts()
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override('auth_strategy', 'noauth2', group='scoped_policies_api')
    api_url = _serve(deploy.loadapp(conf, store, placement))
    print(json.dumps({'placement': placement_url, 'api': api_url,
                      'racks': RACKS}), flush=True)
    sys.stdin.read()      # until the tests close our stdin
    return 0


if __name__ == '__main__':
    sys.exit(main())
