"""A small real cloud in separate processes, for tests that must prove
something lives outside one process.

nova's functional harness runs every service in the test's own process, on
SQLite and an in-memory message bus. This fixture runs them as an operator
does: ``placement`` and ``nova-api`` (their WSGI applications), and the
``nova-conductor``, ``nova-scheduler`` and ``nova-compute`` commands, each
its own OS process, on the PostgreSQL, RabbitMQ and Redis servers of the
machine (127.0.0.1). The computes run nova's fake virt driver.

What is not real by default: keystone (nova-api trusts the identity
headers that keystonemiddleware would set, the services send Placement a
fixed token that Placement's ``noauth2`` accepts), glance and neutron (one
image and no ports, read only: ``serve.stubs_app``). None takes part in
scheduling.

Two parts are asked for (the Tempest run asks for both):

* ``keystone=True``: Keystone 30 (``identity.Keystone``, from
  ``.venv-horizon``) with keystonemiddleware's ``authtoken`` in front of
  nova-api (and of the policy API), and the catalog holding compute,
  placement and scoped-policies. The fixture's ``admin`` client then
  sends a real token; ``tenant`` is None (make users in Keystone).
* ``policy_api=True``: the policy API (``nova-scoped-policies-api``'s
  WSGI application, its store on PostgreSQL, its ``[nova]`` credentials
  with Keystone) as a process of its own; the schedulers read its store
  (``store_driver = sql``), and the racks are the domains of its scope
  ``rack`` instead of aggregate metadata.

Every run has its own databases and RabbitMQ virtual host, removed with
its processes; the logs of every process stay in a directory the caller names
(``log_tail`` quotes them in failure messages).
"""

import collections
import os
import subprocess
import sys
import time
import uuid

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session

from tests import db_backends
from tests.functional.cloud import identity

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BIN = os.path.dirname(sys.executable)
RABBIT = 'rabbit://guest:guest@127.0.0.1:5672/'
FLAVOR = 'small'
POOL = {'max_pool_size': 2, 'max_overflow': 3}
"""Each database engine of a service keeps at most 5 connections (oslo.db
allows 5 + 50): the test suite runs two clouds at once, and PostgreSQL
serves 100 connections in all."""
ADMIN = {'X-User-Id': 'admin', 'X-Project-Id': 'admin',
         'X-Roles': 'admin,member,reader', 'X-Auth-Token': 'admin'}
TENANT = {'X-User-Id': 'tenant', 'X-Project-Id': 'tenant-project',
          'X-Roles': 'member,reader', 'X-Auth-Token': 'tenant'}
START_TIMEOUT = 180


def _ini(sections):
    """An ini file's text; a list value repeats its key (oslo.config's
    multi-valued options)."""
    lines = []
    for name, options in sections.items():
        lines.append(f'[{name}]')
        for key, value in options.items():
            values = value if isinstance(value, list) else [value]
            lines.extend(f'{key} = {one}' for one in values)
        lines.append('')
    return '\n'.join(lines) + '\n'


def running(racks, logs, **options):
    """A started :class:`Cloud`, stopped when the generator is closed (for
    module-scoped pytest fixtures: ``yield from cloud.running(...)``)."""
    deployment = Cloud(racks, logs, **options)
    deployment.setUp()
    try:
        yield deployment
    finally:
        deployment.cleanUp()


class Cloud(fixtures.Fixture):
    """``racks`` maps a rack name to its hosts (one ``nova-compute`` each,
    in a host aggregate with ``policy_scope=rack``); ``schedulers``
    ``nova-scheduler`` processes share one RabbitMQ queue, so that nova
    spreads the boots over them. Placement answers
    ``GET /allocation_candidates`` ``latency`` seconds late. Every
    process logs to a file of its name in the directory ``logs``.
    ``options`` are ``[scoped_policies]``'s; ``nova`` maps other nova.conf
    sections to options that replace the fixture's. ``keystone`` and
    ``policy_api``: see the module's docstring."""

    def __init__(self, racks, logs, schedulers=2, latency=0.0,
                 options=None, nova=None, keystone=False, policy_api=False):
        super().__init__()
        self.with_keystone = keystone
        self.with_policy_api = policy_api
        self.keystone = self.policy = None
        self.nova = nova or {}
        self.logs = logs
        self.racks = racks
        self.schedulers = schedulers
        self.latency = latency
        self.options = options or {}
        self.rack_of = {host: rack for rack, hosts in racks.items()
                        for host in hosts}

    def _setUp(self):
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.procs = collections.OrderedDict()
        if self.with_keystone:
            self.keystone = self.useFixture(identity.Keystone(self.logs))
        dbs = {name: self._database() for name in
               ('api', 'cell0', 'cell1', 'placement') + (
                   ('store',) if self.with_policy_api else ())}
        vhost = f'nsp-{uuid.uuid4().hex[:12]}'
        self._run(['rabbitmqctl', 'add_vhost', vhost])
        self.addCleanup(self._run, ['rabbitmqctl', 'delete_vhost', vhost])
        self._run(['rabbitmqctl', 'set_permissions', '-p', vhost, 'guest',
                   '.*', '.*', '.*'])
        transport = RABBIT + vhost
        # the processes stop before their databases and vhost go
        self.addCleanup(self._stop_all)

        placement_dir = os.path.join(self.dir, 'placement')
        os.mkdir(placement_dir)
        self._write(os.path.join(placement_dir, 'placement.conf'), {
            'api': {'auth_strategy': 'noauth2'},
            'placement_database': dict(POOL, connection=dbs['placement']),
        })
        self._run([os.path.join(BIN, 'placement-manage'), '--config-dir',
                   placement_dir, 'db', 'sync'])
        placement = self._serve('placement', OS_PLACEMENT_CONFIG_DIR=(
            placement_dir), NSP_PLACEMENT_LATENCY=str(self.latency))
        stubs = self._serve('stubs')

        self._paste()
        self.conf = os.path.join(self.dir, 'nova.conf')
        sections = self._nova_conf(dbs, transport, placement, stubs)
        for name, values in self.nova.items():
            sections.setdefault(name, {}).update(values)
        self.vhost = vhost
        self._write(self.conf, sections)
        manage = [os.path.join(BIN, 'nova-manage'), '--config-file',
                  self.conf]
        self._run(manage + ['api_db', 'sync'])
        self._run(manage + ['cell_v2', 'map_cell0', '--database_connection',
                            dbs['cell0']])
        self._run(manage + ['cell_v2', 'create_cell', '--name', 'cell1'])
        self._run(manage + ['db', 'sync'])

        url = self._serve('nova-api', OS_NOVA_CONFIG_DIR=self.dir,
                          OS_NOVA_CONFIG_FILES='api-paste.ini;nova.conf')
        self.nova_url = url + '/v2.1'
        if self.keystone:
            self.admin = self._client(url, session=self.keystone.session)
            self.tenant = None
            self.keystone.register('compute', 'nova', self.nova_url)
            self.keystone.register('placement', 'placement', placement)
        else:
            self.admin = self._client(url, ADMIN)
            self.tenant = self._client(url, TENANT)
        if self.with_policy_api:
            self._policy_api(dbs['store'], placement)
        self._service('conductor', 'nova-conductor')
        for n in range(1, self.schedulers + 1):
            self._scheduler(n)
        for host in self.rack_of:
            self._service(host, 'nova-compute', DEFAULT={
                'state_path': os.path.join(self.dir, host)})
        self._wait_for_services()
        self._run(manage + ['cell_v2', 'discover_hosts'])
        self.admin.post('/flavors', json={'flavor': {
            'name': FLAVOR, 'id': FLAVOR, 'vcpus': 1, 'ram': 512,
            'disk': 1}})
        aggregates = []
        for rack, hosts in self.racks.items():
            agg = self.admin.post('/os-aggregates', json={
                'aggregate': {'name': rack}}).json()['aggregate']
            aggregates.append(agg['uuid'])
            for host in hosts:
                self.admin.post(f'/os-aggregates/{agg["id"]}/action',
                                json={'add_host': {'host': host}})
            if not self.policy:
                self.admin.post(f'/os-aggregates/{agg["id"]}/action', json={
                    'set_metadata': {'metadata': {'policy_scope': 'rack'}}})
        if self.policy and aggregates:
            self.policy.post('/os-policy-scopes', json={'policy_scope': {
                'name': 'rack', 'aggregates': aggregates}})

    # set-up steps

    def _database(self):
        url, drop = db_backends.create('postgresql', self.dir)
        self.addCleanup(drop)
        return url

    def _write(self, path, sections):
        with open(path, 'w') as out:
            out.write(_ini(sections))

    def _paste(self):
        """nova's api-paste.ini; without Keystone, without
        keystonemiddleware's ``authtoken``: the identity headers of our
        requests are trusted as they would be once keystonemiddleware had
        checked the token."""
        with open(os.path.join(sys.prefix, 'etc', 'nova',
                               'api-paste.ini')) as paste:
            text = paste.read()
        with open(os.path.join(self.dir, 'api-paste.ini'), 'w') as out:
            out.write(text if self.keystone else
                      text.replace(' authtoken ', ' '))

    def _policy_api(self, store, placement):
        """The policy API, its store synced; ``self.policy`` its admin
        client. The schedulers read the store (``store_driver = sql``)."""
        conf = os.path.join(self.dir, 'nova-scoped-policies.conf')
        sections = {
            'DEFAULT': {'use_stderr': 'true'},
            'policy_store': {'connection': store},
            'scoped_policies_api': {'auth_strategy': 'noauth2'},
            'placement': {'auth_type': 'admin_token', 'token': 'admin',
                          'endpoint': placement},
        }
        if self.keystone:
            credentials = self.keystone.credentials()
            sections['scoped_policies_api']['auth_strategy'] = 'keystone'
            sections['keystone_authtoken'] = dict(
                credentials, www_authenticate_uri=f'{self.keystone.url}/v3')
            # repairs live-migrate through nova-api, with a token
            sections['nova'] = dict(credentials, region_name=(
                identity.REGION))
        self._write(conf, sections)
        self._run([os.path.join(BIN, 'nova-scoped-policies-manage'), 'db',
                   'sync', '--config-file', conf])
        url = self._serve('policy-api', NSP_CONFIG_FILES=conf)
        self.policy_url = url
        if self.keystone:
            self.keystone.register('scoped-policies', 'nova-scoped-policies',
                                   url)
            self.policy = ks_adapter.Adapter(
                self.keystone.session, endpoint_override=url,
                raise_exc=True)
        else:
            self.policy = ks_adapter.Adapter(
                ks_session.Session(), endpoint_override=url,
                additional_headers=ADMIN, raise_exc=True)

    def _nova_conf(self, dbs, transport, placement, stubs):
        filters = ['ComputeFilter', 'ImagePropertiesFilter',
                   'ServerGroupAntiAffinityFilter',
                   'ServerGroupAffinityFilter', 'ScopedAffinityFilter',
                   'ScopedAntiAffinityFilter']
        sections = {
            'DEFAULT': {
                'transport_url': transport,
                'compute_driver': 'fake.FakeDriver',
                'state_path': self.dir,
                'heal_instance_info_cache_interval': -1,
                'use_stderr': 'true',
            },
            'api': {'auth_strategy': 'keystone'},
            'wsgi': {'api_paste_config':
                     os.path.join(self.dir, 'api-paste.ini')},
            'api_database': dict(POOL, connection=dbs['api']),
            'database': dict(POOL, connection=dbs['cell1']),
            'placement': {'auth_type': 'admin_token', 'token': 'admin',
                          'endpoint': placement},
            'glance': {'endpoint_override': stubs},
            'neutron': {'endpoint_override': stubs},
            'oslo_concurrency': {'lock_path':
                                 os.path.join(self.dir, 'locks')},
            'oslo_messaging_notifications': {'driver': 'noop'},
            'quota': {key: -1 for key in (
                'instances', 'cores', 'ram', 'server_groups',
                'server_group_members')},
            'scheduler': {'workers': 1},
            'conductor': {'workers': 1},
            'filter_scheduler': {
                'available_filters': [
                    'nova.scheduler.filters.all_filters',
                    'nova_scoped_policies.scheduler.filters.all_filters'],
                'enabled_filters': ','.join(filters),
                'weight_classes': (
                    'nova.scheduler.weights.all_weighers,'
                    'nova_scoped_policies.scheduler.weights.all_weighers'),
            },
            'scoped_policies': dict(self.options),
        }
        if self.keystone:
            sections['keystone_authtoken'] = dict(
                self.keystone.credentials(),
                www_authenticate_uri=f'{self.keystone.url}/v3')
            # nova asks neutron as itself (live migrations, deletes): the stub
            sections['neutron'].update({'auth_type': 'admin_token',
                                        'token': 'admin', 'endpoint': stubs})
        if 'store' in dbs:
            sections['scoped_policies'].setdefault('store_driver', 'sql')
            sections['policy_store'] = {'connection': dbs['store']}
        return sections

    def _env(self, **env):
        merged = dict(os.environ, **env)
        merged['PYTHONPATH'] = os.pathsep.join(
            filter(None, [ROOT, os.environ.get('PYTHONPATH')]))
        # loopback only, never a proxy
        merged['no_proxy'] = merged['NO_PROXY'] = '127.0.0.1,localhost'
        return merged

    def _run(self, argv):
        done = subprocess.run(argv, capture_output=True, text=True,
                              env=self._env(), timeout=START_TIMEOUT)
        if done.returncode:
            raise RuntimeError(f'{" ".join(argv[:3])}... exited '
                               f'{done.returncode}: {done.stderr[-2000:]}')
        return done.stdout

    def _start(self, name, argv, stdout=None, **env):
        log = open(os.path.join(self.logs, f'{name}.log'), 'a')
        self.procs[name] = proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=stdout or log,
            stderr=log, text=True, env=self._env(**env), cwd=ROOT)
        log.close()
        return proc

    def _serve(self, role, **env):
        proc = self._start(role, [sys.executable, '-m',
                                  'tests.functional.cloud.serve', role],
                           subprocess.PIPE, **env)
        url = proc.stdout.readline().strip()
        if not url.startswith('http://'):
            raise RuntimeError(f'{role} did not start: '
                               f'{self.log_tail(role)}')
        return url

    def _service(self, name, command, **sections):
        """Start a nova service with nova.conf and a file of its own
        (its ``host`` name and ``sections`` that override nova.conf)."""
        own = os.path.join(self.dir, f'{name}.conf')
        sections.setdefault('DEFAULT', {})['host'] = name
        self._write(own, sections)
        self._start(name, [os.path.join(BIN, command), '--config-file',
                           self.conf, '--config-file', own])

    @staticmethod
    def _client(url, headers=None, session=None):
        return ks_adapter.Adapter(
            session or ks_session.Session(), endpoint_override=url + '/v2.1',
            service_type='compute', default_microversion='2.74',
            additional_headers=headers or {}, raise_exc=True)

    def _wait_for_services(self):
        wanted = {'conductor', *self.rack_of,
                  *(f'scheduler-{n}' for n in range(1, self.schedulers + 1))}
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            services = self.admin.get('/os-services').json()['services']
            up = {s['host'] for s in services if s['state'] == 'up'}
            if wanted <= up:
                break
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f'{name} exited: '
                                       f'{self.log_tail(name)}')
            if time.monotonic() > deadline:
                raise RuntimeError(f'not up after {START_TIMEOUT} s: '
                                   f'{sorted(wanted - up)}')
            time.sleep(1)

    # teardown

    def _stop_all(self):
        self._stop(list(reversed(self.procs)))

    def _stop(self, names):
        for name in names:
            proc = self.procs[name]
            if proc.stdin:
                proc.stdin.close()
            proc.terminate()
        for name in names:
            proc = self.procs.pop(name)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout:
                proc.stdout.close()

    # for tests

    def _scheduler(self, n, **options):
        # debug: its log says which requests it took (scheduled_by)
        self._service(f'scheduler-{n}', 'nova-scheduler',
                      DEFAULT={'debug': 'true'}, scoped_policies=options)

    def restart_schedulers(self, **options):
        """Stop the schedulers and start them again with these
        ``[scoped_policies]`` options over nova.conf's. Boots sent in the
        meantime wait in their RabbitMQ queue."""
        self._stop([name for name in self.procs
                    if name.startswith('scheduler-')])
        for n in range(1, self.schedulers + 1):
            self._scheduler(n, **options)

    def scheduled_by(self):
        """How many boot requests each scheduler process has taken."""
        return {name: self.log(name).count(
            'Starting to schedule for instances')
            for name in self.procs if name.startswith('scheduler-')}

    def log(self, name):
        with open(os.path.join(self.logs, f'{name}.log')) as log:
            return log.read()

    def log_tail(self, name, chars=3000):
        return self.log(name)[-chars:]
