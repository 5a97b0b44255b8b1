"""A real cloud for the dashboard's browser tests, on loopback.

* Keystone 30 on SQLite in a temporary directory (``keystone-manage
  db_sync``, ``fernet_setup``, ``credential_setup``, ``bootstrap``),
  served by ``keystone_serve.py``; its catalog holds the policy API under
  service type ``scoped-policies``; a tenant project with a member user
  and a reader user.
* ``serve.py`` in the main virtualenv: a real Placement (noauth2), the
  policy API behind keystonemiddleware, a stub of Nova's live migration.
* Horizon (``django-admin runserver``, ``horizon_settings.py``) with the
  plugin's enabled/ files.
* Debian's chromium and chromium-driver through Selenium. Missing, they
  fail the tests saying so (tools/run-tests.sh installs them as root).

These run in ``.venv-horizon`` (tools/horizon-venv.sh); the main
virtualenv is ``$NSP_VENV`` (default ``.venv``).
"""

import contextlib
import grp
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import time

from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
import pytest
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
ARTIFACTS = os.path.join(ROOT, '.test-artifacts', 'dashboard')
ADMIN_PASSWORD = 'admin-' + secrets.token_hex(6)
TENANT = {'project': 'tenant-a', 'user': 'alice',
          'password': 'alice-' + secrets.token_hex(6)}
READER = {'user': 'rita', 'password': 'rita-' + secrets.token_hex(6)}
"""A user with only the reader role of the tenant's project (an auditor,
a dashboard that only looks)."""
CHROMIUM = ('chromium', 'chromedriver')
START_TIMEOUT = 180


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _wait_for(url: str, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f'{what} exited with {proc.returncode}')
        try:
            requests.get(url, timeout=60)
            return
        except requests.ConnectionError:
            if time.monotonic() > deadline:
                raise RuntimeError(f'{what} did not answer at {url}')
            time.sleep(0.5)


@contextlib.contextmanager
def _serving(args, what, env=None, log=None):
    """A process that prints its URL (or JSON) on one line and serves
    until its standard input closes."""
    proc = subprocess.Popen(args, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=log,
                            text=True, cwd=ROOT, env=env)
    try:
        line = proc.stdout.readline().strip()
        if not line:
            raise RuntimeError(f'{what} did not start (see {log.name})'
                               if log else f'{what} did not start')
        yield line
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _manage(conf: str, *args) -> subprocess.Popen:
    return subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), 'keystone-manage'),
         '--config-file', conf, *args], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)


def _done(*procs) -> None:
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f'keystone-manage {proc.args}: {err}'


@pytest.fixture(scope='session')
def logs(tmp_path_factory):
    return tmp_path_factory.mktemp('logs')


@pytest.fixture(scope='session')
def keystone(tmp_path_factory, logs):
    """Keystone's URL (no /v3)."""
    home = tmp_path_factory.mktemp('keystone')
    port = _free_port()
    url = f'http://127.0.0.1:{port}'
    conf = home / 'keystone.conf'
    conf.write_text(f"""[database]
connection = sqlite:///{home}/keystone.db
[token]
provider = fernet
[fernet_tokens]
key_repository = {home}/fernet-keys
[fernet_receipts]
key_repository = {home}/fernet-keys
[credential]
key_repository = {home}/credential-keys
""")
    user = pwd.getpwuid(os.getuid()).pw_name
    group = grp.getgrgid(os.getgid()).gr_name
    owner = ('--keystone-user', user, '--keystone-group', group)
    _done(_manage(str(conf), 'db_sync'),
          _manage(str(conf), 'fernet_setup', *owner),
          _manage(str(conf), 'credential_setup', *owner))
    _done(_manage(str(conf), 'bootstrap',
                  '--bootstrap-password', ADMIN_PASSWORD,
                  '--bootstrap-admin-url', f'{url}/v3',
                  '--bootstrap-public-url', f'{url}/v3',
                  '--bootstrap-internal-url', f'{url}/v3',
                  '--bootstrap-region-id', 'RegionOne'))
    with open(logs / 'keystone.log', 'w') as log:
        with _serving([sys.executable, os.path.join(HERE,
                                                    'keystone_serve.py'),
                       str(conf), str(port)], 'Keystone', log=log) as got:
            assert got == url
            yield url


def _main_python() -> str:
    venv = os.environ.get('NSP_VENV') or os.path.join(ROOT, '.venv')
    python = os.path.join(venv, 'bin', 'python')
    if not os.path.exists(python):
        raise RuntimeError(f'{python} is missing: the policy API and '
                           'Placement run in the main virtualenv (run '
                           'tools/run-tests.sh once, or set NSP_VENV)')
    return python


class Identity:
    """Keystone as its administrator: projects, users, the catalog."""

    def __init__(self, url: str) -> None:
        self.session = ks_session.Session(auth=v3.Password(
            auth_url=f'{url}/v3', username='admin', password=ADMIN_PASSWORD,
            project_name='admin', user_domain_id='default',
            project_domain_id='default'))
        self.url = f'{url}/v3'

    def post(self, path: str, body: dict) -> dict:
        return self.session.post(self.url + path, json=body).json()

    def role(self, name: str) -> str:
        return self.session.get(f'{self.url}/roles?name={name}').json()[
            'roles'][0]['id']

    def tenant(self, project: str, user: str, password: str,
               role: str = 'member') -> str:
        """A new project and its user with ``role`` in it: the project's
        id."""
        pid = self.post('/projects', {'project': {
            'name': project, 'domain_id': 'default'}})['project']['id']
        self.user(pid, user, password, role)
        return pid

    def user(self, project_id: str, user: str, password: str,
             role: str) -> str:
        """A new user with ``role`` in the project: its id."""
        uid = self.post('/users', {'user': {
            'name': user, 'password': password, 'domain_id': 'default',
            'default_project_id': project_id}})['user']['id']
        self.session.put(f'{self.url}/projects/{project_id}/users/{uid}/'
                         f'roles/{self.role(role)}')
        return uid

    def service(self, service_type: str, url: str) -> None:
        sid = self.post('/services', {'service': {
            'type': service_type, 'name': 'nova-scoped-policies'}}
        )['service']['id']
        for interface in ('public', 'internal', 'admin'):
            self.post('/endpoints', {'endpoint': {
                'service_id': sid, 'interface': interface, 'url': url,
                'region_id': 'RegionOne'}})


@pytest.fixture(scope='session')
def cloud(keystone, logs):
    """The policy API, Placement and the stub Nova (serve.py's JSON), the
    tenant's project id, and the policy API in Keystone's catalog."""
    with open(logs / 'serve.log', 'w') as log:
        with _serving([_main_python(), os.path.join(HERE, 'serve.py'),
                       keystone, ADMIN_PASSWORD], 'serve.py',
                      log=log) as line:
            world = json.loads(line)
            identity = Identity(keystone)
            identity.service('scoped-policies', world['api'])
            world['tenant'] = identity.tenant(
                TENANT['project'], TENANT['user'], TENANT['password'])
            identity.user(world['tenant'], READER['user'],
                          READER['password'], 'reader')
            world['admin_project'] = identity.session.get_project_id()
            yield world


@pytest.fixture(scope='session')
def horizon(keystone, cloud, logs):
    """Horizon's URL, served by runserver."""
    port = _free_port()
    env = dict(os.environ, NSP_KEYSTONE_URL=keystone,
               NSP_HORIZON_SECRET=secrets.token_hex(32),
               DJANGO_SETTINGS_MODULE='tests.dashboard.horizon_settings',
               PYTHONPATH=ROOT)
    with open(logs / 'horizon.log', 'w') as log:
        proc = subprocess.Popen(
            [sys.executable, '-m', 'django', 'runserver', '--noreload',
             f'127.0.0.1:{port}'], stdout=log, stderr=subprocess.STDOUT,
            cwd=ROOT, env=env)
        url = f'http://127.0.0.1:{port}'
        try:
            _wait_for(f'{url}/auth/login/', proc, 'Horizon')
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def chromium_paths():
    """(chromium, chromedriver), or fail naming what is missing."""
    found = [shutil.which(name) for name in CHROMIUM]
    missing = [n for n, p in zip(('chromium', 'chromium-driver'), found)
               if not p]
    if missing:
        pytest.fail('the browser tests need Debian\'s ' + ' and '.join(
            missing) + ': apt-get install ' + ' '.join(missing) +
            ' (tools/run-tests.sh does, as root)')
    return found


@pytest.fixture(scope='session')
def driver():
    from selenium import webdriver
    from selenium.webdriver.chrome import service
    chromium, chromedriver = chromium_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage',
                '--window-size=1400,1000', '--disable-gpu'):
        options.add_argument(arg)
    browser = webdriver.Chrome(options=options,
                               service=service.Service(chromedriver))
    browser.set_page_load_timeout(180)
    os.makedirs(ARTIFACTS, exist_ok=True)
    yield browser
    browser.quit()
