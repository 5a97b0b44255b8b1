"""Keystone 30 for the separate-process cloud: the identity service that
keystonemiddleware in front of nova-api and the policy API checks tokens
against, and that Tempest makes its projects and users in.

Keystone's pins (SQLAlchemy 2.1) are not nova's: it runs from the
virtualenv that has it, ``.venv-horizon`` (tools/horizon-venv.sh;
``NSP_KEYSTONE_VENV`` names another), on SQLite in a temporary directory,
served one request at a time by ``serve.py``'s ``keystone`` role.
``keystone-manage
bootstrap`` makes the ``admin`` user and project and the roles ``admin``,
``member`` and ``reader``.
"""

import grp
import os
import pwd
import secrets
import socket
import subprocess

import fixtures
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
SERVE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     'serve.py')
REGION = 'RegionOne'
TIMEOUT = 300
SHM = '/dev/shm'


def venv() -> str:
    """The virtualenv Keystone runs from; fails saying how to make it."""
    found = os.environ.get('NSP_KEYSTONE_VENV') or os.environ.get(
        'NSP_HORIZON_VENV') or os.path.join(ROOT, '.venv-horizon')
    if not os.path.exists(os.path.join(found, 'bin', 'keystone-manage')):
        raise RuntimeError(
            f'Keystone is not installed in {found}: run tools/horizon-venv.sh '
            '(or set NSP_KEYSTONE_VENV to a virtualenv with keystone 30)')
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Keystone(fixtures.Fixture):
    """A running Keystone on loopback.

    :ivar url: its URL (no ``/v3``).
    :ivar password: the ``admin`` user's password.
    :param logs: the directory of its log (``keystone.log``).
    """

    def __init__(self, logs: str) -> None:
        super().__init__()
        self.logs = logs
        self.password = 'admin-' + secrets.token_hex(8)

    def _setUp(self):
        home = self.useFixture(fixtures.TempDir()).path
        # its database in memory's filesystem where there is one: SQLite
        # syncs each of Tempest's writes to disk, one request at a time
        data = self.useFixture(fixtures.TempDir(
            rootdir=SHM if os.path.isdir(SHM) else None)).path
        self.venv = venv()
        port = _free_port()
        self.url = f'http://127.0.0.1:{port}'
        conf = os.path.join(home, 'keystone.conf')
        with open(conf, 'w') as out:
            out.write(f"""[DEFAULT]
use_stderr = true
[database]
connection = sqlite:///{data}/keystone.db
[identity]
# bcrypt's fewest rounds: Tempest makes users and tokens by the hundred,
# and hashing at the default cost takes most of a test cloud's CPU
password_hash_rounds = 4
[token]
provider = fernet
[fernet_tokens]
key_repository = {home}/fernet-keys
[fernet_receipts]
key_repository = {home}/fernet-keys
[credential]
key_repository = {home}/credential-keys
""")
        owner = ('--keystone-user', pwd.getpwuid(os.getuid()).pw_name,
                 '--keystone-group', grp.getgrgid(os.getgid()).gr_name)
        self._manage(conf, 'db_sync')
        self._manage(conf, 'fernet_setup', *owner)
        self._manage(conf, 'credential_setup', *owner)
        self._manage(conf, 'bootstrap', '--bootstrap-password',
                     self.password, '--bootstrap-region-id', REGION,
                     *(arg for kind in ('admin', 'public', 'internal')
                       for arg in (f'--bootstrap-{kind}-url',
                                   f'{self.url}/v3')))
        log = open(os.path.join(self.logs, 'keystone.log'), 'a')
        proc = subprocess.Popen(
            # a script, not -m: this package's __init__ needs what
            # Keystone's virtualenv has not
            [os.path.join(self.venv, 'bin', 'python'), SERVE, 'keystone'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            text=True, cwd=ROOT, env=dict(
                os.environ, OS_KEYSTONE_CONFIG_FILES=conf,
                NSP_KEYSTONE_PORT=str(port), PYTHONPATH=ROOT,
                no_proxy='127.0.0.1,localhost'))
        log.close()
        self.addCleanup(self._stop, proc)
        line = proc.stdout.readline().strip()
        if line != self.url:
            raise RuntimeError(f'Keystone did not start: {line!r} (see '
                               f'{self.logs}/keystone.log)')
        self.session = self.session_of('admin', self.password, 'admin')

    def _manage(self, conf: str, *args) -> None:
        done = subprocess.run(
            [os.path.join(self.venv, 'bin', 'keystone-manage'),
             '--config-file', conf, *args], capture_output=True, text=True,
            timeout=TIMEOUT)
        if done.returncode:
            raise RuntimeError(f'keystone-manage {args[0]} exited '
                               f'{done.returncode}: {done.stderr[-2000:]}')

    @staticmethod
    def _stop(proc: subprocess.Popen) -> None:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()

    def session_of(self, user: str, password: str,
                   project: str) -> ks_session.Session:
        """A keystoneauth1 session of ``user`` scoped to ``project``."""
        http = ks_session.Session(auth=v3.Password(
            auth_url=f'{self.url}/v3', username=user, password=password,
            project_name=project, user_domain_id='default',
            project_domain_id='default'))
        # loopback only, never a proxy
        http.session.trust_env = False
        return http

    def credentials(self) -> dict:
        """keystoneauth1 password options of the admin, as a service's
        ``[keystone_authtoken]``, ``[nova]``... take them."""
        return {'auth_type': 'password', 'auth_url': f'{self.url}/v3',
                'username': 'admin', 'password': self.password,
                'project_name': 'admin', 'user_domain_id': 'default',
                'project_domain_id': 'default'}

    def register(self, service_type: str, name: str, url: str) -> None:
        """Put ``url`` in the catalog as the ``service_type`` endpoint
        (public, internal and admin)."""
        api = f'{self.url}/v3'
        service = self.session.post(f'{api}/services', json={'service': {
            'type': service_type, 'name': name}}).json()['service']
        for interface in ('public', 'internal', 'admin'):
            self.session.post(f'{api}/endpoints', json={'endpoint': {
                'service_id': service['id'], 'interface': interface,
                'url': url, 'region_id': REGION}})
