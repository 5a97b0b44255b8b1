"""Serve a real Placement (noauth2), the policy API behind
keystonemiddleware (Keystone's tokens) and a stub of Nova's live
migration on loopback, for the dashboard's browser tests.

Runs in the project's main virtualenv (``.venv``: nova's pins) while the
browser tests run in ``.venv-horizon``, as the policy service and Horizon
run apart in a cloud. ``python tests/dashboard/serve.py KEYSTONE_URL
ADMIN_PASSWORD`` prints one JSON line with the endpoints and the world,
then serves until its standard input closes.

World: the racks of the Heat tests (``tests/heat/serve.py``: rack-1..rack-3
of two hosts each) and the scope ``rack`` over them (identifiers allowed
and obfuscated: each tenant sees racks by its own ids).

The stub of Nova answers what the policy API asks Nova: any server group
(of no particular project), a server's project from its allocations, a
project's quota (no limit), and a live migration, which moves the
server's allocations in Placement to the target host at once (the
hypervisors are the Placement providers).
"""

import json
import os
import re
import sys
import tempfile

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from oslo_config import cfg
from placement import deploy as placement_deploy
from placement.tests.functional.fixtures import placement as placement_fix

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

from nova_scoped_policies.api import deploy  # noqa: E402
from nova_scoped_policies import conf as nsp_conf  # noqa: E402
from nova_scoped_policies.db import api as store_api  # noqa: E402
from nova_scoped_policies.db import migration  # noqa: E402
from nova_scoped_policies.placement import client as pc  # noqa: E402
from tests.functional import wsgi_server  # noqa: E402
from tests.heat import serve as heat_serve  # noqa: E402

RACKS = heat_serve.RACKS
NS = '6f72348f-df5d-4e0f-a043-4be92996dbfe'
_SERVER = re.compile(r'^/servers/([0-9a-f-]{36})(/action)?$')


class StubNova:
    """The Nova the policy API asks (:class:`api.nova.NovaGroups`'s
    methods), with ``adapter`` on :meth:`app` for the repairs' live
    migrations (:class:`api.moves.NovaMoves`)."""

    def __init__(self, placement: pc.PlacementClient,
                 aggregates: dict) -> None:
        self.placement = placement
        self.aggregates = aggregates
        self.adapter = None

    def group(self, uuid):
        return {'id': uuid, 'project_id': None, 'members': []}

    def members(self, uuid):
        return []

    def server_group(self, uuid):
        return None

    def _allocations(self, uuid) -> dict:
        return self.placement.request('GET', f'/allocations/{uuid}',
                                      version='1.28').json()

    def server_project(self, uuid):
        found = self._allocations(uuid)
        return found.get('project_id') if found.get('allocations') else None

    def aggregate_hosts(self):
        return {uuid: frozenset(RACKS[rack])
                for rack, uuid in self.aggregates.items()}

    def _host(self, uuid):
        found = self._allocations(uuid).get('allocations') or {}
        names = {p['uuid']: p['name'] for p in self.placement.list_providers()}
        return next((names[rp] for rp in found), None)

    def _migrate(self, uuid, host) -> bool:
        found = self._allocations(uuid)
        if not found.get('allocations'):
            return False
        (target,) = self.placement.list_providers(name=host) or [None]
        if target is None:
            return False
        resources = {}
        for used in found['allocations'].values():
            for rc, amount in used['resources'].items():
                resources[rc] = resources.get(rc, 0) + amount
        self.placement.request('PUT', f'/allocations/{uuid}', {
            'allocations': {target['uuid']: {'resources': resources}},
            'project_id': found['project_id'], 'user_id': found['user_id'],
            'consumer_generation': found['consumer_generation']},
            version='1.28')
        return True

    def app(self, environ, start_response):
        """Nova's compute API, as much as a repair's moves read."""
        path, method = environ['PATH_INFO'], environ['REQUEST_METHOD']
        status, body = '404 Not Found', {}
        matched = _SERVER.match(path)
        if path.startswith('/os-quota-sets/') and path.endswith('/detail'):
            # no limit: the stacks' quota check passes
            status, body = '200 OK', {'quota_set': {
                r: {'limit': -1, 'in_use': 0, 'reserved': 0}
                for r in ('instances', 'cores', 'ram')}}
        elif path == '/os-hypervisors/detail':
            status, body = '200 OK', {'hypervisors': [
                {'hypervisor_hostname': h, 'service': {'host': h}}
                for hosts in RACKS.values() for h in hosts]}
        elif matched and matched.group(2) and method == 'POST':
            size = int(environ.get('CONTENT_LENGTH') or 0)
            asked = json.loads(environ['wsgi.input'].read(size))
            host = asked['os-migrateLive']['host']
            if self._migrate(matched.group(1), host):
                status = '202 Accepted'
            else:
                status, body = '409 Conflict', {'conflictingRequest': {
                    'message': 'no such server or host'}}
        elif matched and method == 'GET':
            host = self._host(matched.group(1))
            if host is not None:
                status, body = '200 OK', {'server': {
                    'id': matched.group(1), 'status': 'ACTIVE',
                    'OS-EXT-SRV-ATTR:host': host,
                    'OS-EXT-STS:task_state': None}}
        data = json.dumps(body).encode()
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(data)))])
        return [data]


def _conf(directory: str, keystone: str, password: str) -> cfg.ConfigOpts:
    path = os.path.join(directory, 'nova-scoped-policies.conf')
    with open(path, 'w') as out:
        out.write(f"""[scoped_policies_api]
auth_strategy = keystone
[keystone_authtoken]
www_authenticate_uri = {keystone}/v3
auth_url = {keystone}/v3
auth_type = password
username = admin
password = {password}
project_name = admin
user_domain_id = default
project_domain_id = default
""")
    conf = cfg.ConfigOpts()
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[path])
    return conf


def main(keystone: str, password: str) -> int:
    fixture = placement_fix.PlacementFixture(use_intercept=False)
    fixture.setUp()
    # one thread: the in-memory database is one connection
    placement_url = wsgi_server.serve(
        placement_deploy.loadapp(fixture.conf_fixture.conf), False)
    placement = pc.PlacementClient.for_endpoint(placement_url, 'admin',
                                                '1.38')
    aggregates = heat_serve.build_racks(placement)
    tmp = tempfile.TemporaryDirectory()
    store = store_api.PolicyStore(f'sqlite:///{tmp.name}/store.db')
    migration.upgrade(store.engine)
    store.create_scope('rack', allow_identifiers=True,
                       obfuscate_identifiers=True,
                       obfuscate_namespace_uuid=NS,
                       aggregates=sorted(aggregates.values()))
    nova = StubNova(placement, aggregates)
    nova_url = wsgi_server.serve(nova.app)
    http = ks_session.Session()
    http.session.trust_env = False
    nova.adapter = ks_adapter.Adapter(http, endpoint_override=nova_url)
    api_url = wsgi_server.serve(deploy.loadapp(
        _conf(tmp.name, keystone, password), store, placement, nova))
    print(json.dumps({'placement': placement_url, 'api': api_url,
                      'nova': nova_url, 'racks': RACKS,
                      'aggregates': aggregates, 'namespace': NS}),
          flush=True)
    sys.stdin.read()      # until the tests close our stdin
    return 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:]))
