"""The console scripts: ``db sync`` and the development server, run as
an operator runs them, over real loopback HTTP."""

import os
import socket
import subprocess
import sys
import time

import pytest
import requests

BIN = os.path.dirname(sys.executable)
ADMIN = {'X-Project-Id': 'admin', 'X-Roles': 'admin'}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def wait_for(url, server):
    """The API's root document, once the server answers."""
    http = requests.Session()
    http.trust_env = False
    for _ in range(300):
        try:
            return http.get(url + '/', timeout=5)
        except requests.ConnectionError:
            assert server.poll() is None, 'the API server exited'
            time.sleep(0.1)
    raise AssertionError(f'{url} did not answer in 30 s')


def test_db_sync_then_serve(tmp_path):
    port = _free_port()
    conf = tmp_path / 'nsp.conf'
    conf.write_text(f"""[policy_store]
connection = sqlite:///{tmp_path}/store.db

[scoped_policies_api]
auth_strategy = noauth2
bind_port = {port}
""")
    upgrade = manage('db', 'sync', '--config-file', str(conf))
    assert upgrade.returncode == 0, upgrade.stderr
    assert 'policy store at revision' in upgrade.stdout

    server = subprocess.Popen(
        [os.path.join(BIN, 'nova-scoped-policies-api'), '--config-file',
         str(conf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f'http://127.0.0.1:{port}'
    http = requests.Session()
    http.trust_env = False
    try:
        root = wait_for(url, server)
        assert root.json()['versions'][0]['max_version'] == '1.5'
        created = http.post(url + '/os-policy-scopes', headers=ADMIN,
                            json={'policy_scope': {'name': 'rack'}},
                            timeout=5)
        assert created.status_code == 201, created.text
        listed = http.get(url + '/os-policy-scopes', headers=ADMIN,
                          timeout=5)
        assert [s['name'] for s in listed.json()['policy_scopes']] == [
            'rack']
        assert http.get(url + '/os-policy-scopes',
                        timeout=5).status_code == 401
    finally:
        server.terminate()
        server.wait(timeout=30)


def manage(*args, command='nova-scoped-policies-manage'):
    return subprocess.run([os.path.join(BIN, command), *args],
                          capture_output=True, text=True, timeout=120)


def test_db_upgrade_is_an_alias_of_db_sync(tmp_path):
    conf = tmp_path / 'nsp.conf'
    conf.write_text(f'[policy_store]\nconnection = '
                    f'sqlite:///{tmp_path}/store.db\n')
    assert manage('db', 'version', '--config-file', str(conf)).stdout \
        .strip() == 'None'
    upgrade = manage('db', 'upgrade', '--config-file', str(conf),
                     command='nova-scoped-policies')
    assert upgrade.returncode == 0, upgrade.stderr
    head = upgrade.stdout.split()[-1]
    version = manage('db', 'version', '--config-file', str(conf))
    assert version.stdout.strip() == head
    again = manage('db', 'sync', '--config-file', str(conf))
    assert again.stdout.split()[-1] == head


def test_db_sync_names_a_bad_connection_in_one_line(tmp_path):
    conf = tmp_path / 'nsp.conf'
    conf.write_text('[policy_store]\nconnection = '
                    'sqlite:////nonexistent/dir/store.db\n')
    for command, sync in (('nova-scoped-policies-manage', 'sync'),
                          ('nova-scoped-policies', 'upgrade')):
        upgrade = manage('db', sync, '--config-file', str(conf),
                         command=command)
        assert upgrade.returncode == 1
        errors = [line for line in upgrade.stderr.splitlines()
                  if line.startswith('error:')]
        assert len(errors) == 1, upgrade.stderr
        assert errors[0].startswith('error: [policy_store] connection:')
        assert 'Traceback' not in upgrade.stderr


@pytest.mark.parametrize('revision', [None, 'b1a0c0ffee01'])
def test_the_service_refuses_a_database_not_at_head(tmp_path, revision):
    from nova_scoped_policies.db import api as store_api
    from nova_scoped_policies.db import migration
    url = f'sqlite:///{tmp_path}/store.db'
    if revision:
        store = store_api.PolicyStore(url)
        migration.upgrade(store.engine, revision)
        store.engine.dispose()
    conf = tmp_path / 'nsp.conf'
    conf.write_text(f'[policy_store]\nconnection = {url}\n\n'
                    '[scoped_policies_api]\nauth_strategy = noauth2\n'
                    f'bind_port = {_free_port()}\n')
    found = subprocess.run(
        [os.path.join(BIN, 'nova-scoped-policies-api'), '--config-file',
         str(conf)], capture_output=True, text=True, timeout=120)
    assert found.returncode == 2
    line, = [x for x in found.stderr.splitlines() if x.startswith(
        'nova-scoped-policies-api:')]
    assert f'at revision {revision or "none (empty)"}' in line
    assert 'nova-scoped-policies-manage db sync' in line
