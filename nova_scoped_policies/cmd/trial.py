"""``nova-scoped-policies-manage try``: the policy service on one machine,
to try it.

:class:`Trial` starts two processes in a temporary directory: a real
Placement (openstack-placement, ``[api] auth_strategy = noauth2``, SQLite)
and the policy API (``nova-scoped-policies-api``, ``auth_strategy =
noauth2``, its store on SQLite), then seeds a small cloud through their
HTTP APIs (:data:`RACKS`, :data:`SERVERS`): hosts and rack aggregates in
Placement, the servers' allocations (consumers are the servers' uuids), the
scope ``rack`` and the server group ``db`` in the policy store. No Nova
runs: the group's members are added with ``add_instance``, which the
service checks against Placement's consumer records.

``python -m nova_scoped_policies.cmd.trial placement PORT`` is the
Placement process (its configuration in ``$OS_PLACEMENT_CONFIG_DIR``).
"""

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import typing
import uuid

import requests

PROJECT = 'demo'
"""The project the seeded servers and group belong to; the CLI acts as
its administrator."""
NAMESPACE = uuid.UUID('0b6f3c4e-8a52-4c1e-9d2f-5e2a3f1c7d90')
"""Seeded uuids are uuid5 of their names in this namespace: the same on
every run, so that the documentation shows them as they are."""
RACKS = {'rack-1': ('h1', 'h2'), 'rack-2': ('h3', 'h4'),
         'rack-3': ('h5', 'h6')}
"""Aggregates and their hosts (Placement resource providers)."""
SERVERS = {'db-1': 'h1', 'db-2': 'h2', 'db-3': 'h3', 'cache-1': 'h4'}
"""Servers (Placement consumers) and their hosts. ``db-1`` to ``db-3``
are the members of the group ``db`` (anti-affinity across racks): db-1
and db-2 share rack-1, a violation for the audit and the repair plan."""
GROUP = 'db'
INVENTORY = {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 32768}}
FLAVOR = {'VCPU': 2, 'MEMORY_MB': 4096}
START_TIMEOUT = 60.0


def seeded_id(name: str) -> str:
    """The uuid of a seeded host, aggregate, server or group."""
    return str(uuid.uuid5(NAMESPACE, name))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class StartError(Exception):
    """A process of the trial did not start; the message says why (a port
    in use, or the process's log)."""


def _check_free(port: int, option: str) -> None:
    """:class:`StartError` if ``port`` is taken on 127.0.0.1: else the
    service already there would answer for the child that failed."""
    with socket.socket() as probe:
        # as the servers bind: a port whose connections of a run just
        # stopped wait in TIME_WAIT is free; one a server listens on is
        # not
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(('127.0.0.1', port))
        except OSError as exc:
            raise StartError(f'{option} {port}: {exc.strerror}; choose '
                             f'another port ({option} 0: any free one)')


class Trial:
    """Placement and the policy API in ``directory`` (made, then removed
    by :meth:`stop`).

    :param port: the policy API's port (0: a free one).
    :param placement_port: Placement's port (0: a free one).
    """

    def __init__(self, port: int = 8799, placement_port: int = 8778,
                 directory: typing.Optional[str] = None) -> None:
        self.port = port or free_port()
        self.placement_port = placement_port or free_port()
        self.directory = directory or tempfile.mkdtemp(prefix='nsp-try-')
        self.children: typing.List[subprocess.Popen] = []
        self.url = f'http://127.0.0.1:{self.port}'
        self.placement_url = f'http://127.0.0.1:{self.placement_port}'

    # -- processes -------------------------------------------------------

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def _spawn(self, name: str, argv, env=None) -> subprocess.Popen:
        """A child in a session of its own: Ctrl-C reaches this process
        only, which stops the children in order."""
        log = open(self._path(f'{name}.log'), 'wb')
        with log:
            child = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=env, start_new_session=True,
                cwd=self.directory)
        self.children.append(child)
        return child

    def _wait(self, name: str, child: subprocess.Popen, url: str) -> None:
        """Until ``url`` answers; :class:`StartError` if the child ends
        or :data:`START_TIMEOUT` passes first."""
        http = requests.Session()
        http.trust_env = False
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if child.poll() is not None:
                break
            try:
                http.get(url, timeout=2)
                return
            except requests.RequestException:
                time.sleep(0.2)
        with open(self._path(f'{name}.log'), errors='replace') as log:
            tail = ''.join(log.readlines()[-20:])
        raise StartError(f'{name} did not start on {url}:\n{tail}')

    def start(self) -> None:
        """Start Placement, then the policy API on a fresh store."""
        if importlib.util.find_spec('placement') is None:
            raise StartError('try runs a real Placement: pip install '
                             'openstack-placement (tools/try-service.sh '
                             'makes a virtualenv with it)')
        _check_free(self.placement_port, '--placement-port')
        _check_free(self.port, '--port')
        with open(self._path('placement.conf'), 'w') as conf:
            conf.write(
                '[api]\nauth_strategy = noauth2\n'
                '[placement_database]\n'
                f'connection = sqlite:///{self._path("placement.db")}\n'
                'sync_on_startup = true\n')
        env = dict(os.environ, OS_PLACEMENT_CONFIG_DIR=self.directory)
        placement = self._spawn('placement', [
            sys.executable, '-m', __name__, 'placement',
            str(self.placement_port)], env)
        self._wait('placement', placement, self.placement_url)
        config = self._path('nova-scoped-policies.conf')
        with open(config, 'w') as conf:
            conf.write(
                '[policy_store]\n'
                f'connection = sqlite:///{self._path("policy-store.db")}\n'
                '[scoped_policies_api]\nauth_strategy = noauth2\n'
                f'bind_port = {self.port}\n'
                '# one solver worker: the same stack, the same decision\n'
                'stack_workers = 1\n'
                '[placement]\n# Placement behind noauth2: any token\n'
                'auth_type = admin_token\ntoken = admin\n'
                f'endpoint = {self.placement_url}\n')
        from nova_scoped_policies.db import api as store_api
        from nova_scoped_policies.db import migration
        store = store_api.PolicyStore(
            f'sqlite:///{self._path("policy-store.db")}')
        migration.upgrade(store.engine)
        store.engine.dispose()
        api = self._spawn('policy-api', [
            os.path.join(os.path.dirname(sys.executable),
                         'nova-scoped-policies-api'),
            '--config-file', config])
        self._wait('policy-api', api, self.url)

    def stop(self) -> None:
        """Stop the children (SIGTERM, then SIGKILL after 10 s) and
        remove the directory. Safe to call twice."""
        for child in reversed(self.children):
            if child.poll() is None:
                child.terminate()
        for child in reversed(self.children):
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        self.children = []
        shutil.rmtree(self.directory, ignore_errors=True)

    # -- the seeded cloud ------------------------------------------------

    def seed(self) -> None:
        """Hosts, aggregates and allocations in Placement; the scope
        ``rack`` and the group ``db`` in the policy store."""
        from keystoneauth1 import session as ks_session
        from keystoneauth1 import token_endpoint

        from nova_scoped_policies import client as api_client
        from nova_scoped_policies.placement import client as pc

        placement = pc.PlacementClient.for_endpoint(self.placement_url)
        for rack, hosts in RACKS.items():
            for host in hosts:
                rp = seeded_id(host)
                placement.create_provider(host, rp)
                placement.set_inventory(rp, 0, INVENTORY)
                placement.set_aggregates(rp, 1, [seeded_id(rack)])
        for server, host in SERVERS.items():
            placement.put_allocations(seeded_id(server), {
                'allocations': {seeded_id(host): {'resources': FLAVOR}},
                'project_id': PROJECT, 'user_id': PROJECT,
                'consumer_generation': None})
        http = requests.Session()
        http.trust_env = False
        api = api_client.Client(
            ks_session.Session(auth=token_endpoint.Token(self.url, 'x'),
                               session=http),
            additional_headers={'X-Project-Id': PROJECT,
                                'X-User-Id': PROJECT, 'X-Roles': 'admin'})
        api.request('POST', '/os-policy-scopes', {'policy_scope': {
            'name': 'rack', 'allow_identifiers': True,
            'aggregates': [seeded_id(rack) for rack in RACKS]}})
        group = seeded_id(GROUP)
        api.request('POST', '/os-server-groups', {'server_group': {
            'id': group, 'name': GROUP,
            'policy': {'name': 'anti-affinity:rack'}}})
        for server in ('db-1', 'db-2', 'db-3'):
            api.request('POST', f'/os-server-groups/{group}/action',
                        {'add_instance': {'instance_id': seeded_id(server)}})

    def describe(self) -> typing.List[str]:
        """The seeded cloud, a line per aggregate, server and group, with
        the uuids the CLI's output shows."""
        lines = [f'aggregate {rack} = {seeded_id(rack)}: hosts '
                 f'{", ".join(hosts)} (a domain of the scope rack)'
                 for rack, hosts in RACKS.items()]
        lines += [f'server {server} = {seeded_id(server)} on {host} '
                  f'(project {PROJECT})' for server, host in SERVERS.items()]
        lines.append(f'server group {GROUP} = {seeded_id(GROUP)} '
                     '(anti-affinity:rack): db-1, db-2, db-3')
        return lines

    def environment(self) -> typing.Dict[str, str]:
        """What ``openstack scoped policy ...`` needs: no Keystone, the
        API's URL, the identity noauth2 trusts."""
        return {'OS_AUTH_TYPE': 'none',
                'OS_SCOPED_POLICIES_ENDPOINT': self.url,
                'OS_SCOPED_POLICIES_PROJECT_ID': PROJECT,
                'OS_SCOPED_POLICIES_ROLES': 'admin'}


def serve_placement(port: int) -> None:
    """The Placement process: placement's own WSGI application (its
    configuration from ``$OS_PLACEMENT_CONFIG_DIR``) on 127.0.0.1."""
    from wsgiref import simple_server

    from placement import wsgi

    class Quiet(simple_server.WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = simple_server.make_server(
        '127.0.0.1', port, wsgi.init_application(), handler_class=Quiet)
    server.serve_forever()


if __name__ == '__main__':
    if sys.argv[1:2] == ['placement']:
        serve_placement(int(sys.argv[2]))
