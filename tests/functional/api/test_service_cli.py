"""The console scripts: ``db upgrade`` and the development server, run as
an operator runs them, over real loopback HTTP."""

import os
import socket
import subprocess
import sys
import time

import requests

BIN = os.path.dirname(sys.executable)
ADMIN = {'X-Project-Id': 'admin', 'X-Roles': 'admin'}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def test_db_upgrade_then_serve(tmp_path):
    port = _free_port()
    conf = tmp_path / 'nsp.conf'
    conf.write_text(f"""[policy_store]
connection = sqlite:///{tmp_path}/store.db

[scoped_policies_api]
auth_strategy = noauth2
bind_port = {port}
""")
    upgrade = subprocess.run(
        [os.path.join(BIN, 'nova-scoped-policies'), 'db', 'upgrade',
         '--config-file', str(conf)], capture_output=True, text=True,
        timeout=120)
    assert upgrade.returncode == 0, upgrade.stderr
    assert 'policy store at revision' in upgrade.stdout

    server = subprocess.Popen(
        [os.path.join(BIN, 'nova-scoped-policies-api'), '--config-file',
         str(conf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f'http://127.0.0.1:{port}'
    http = requests.Session()
    http.trust_env = False
    try:
        for _ in range(100):
            try:
                root = http.get(url + '/', timeout=5)
                break
            except requests.ConnectionError:
                assert server.poll() is None, server.stdout.read()
                time.sleep(0.1)
        assert root.json()['versions'][0]['max_version'] == '1.0'
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


def test_db_upgrade_names_a_bad_connection(tmp_path):
    conf = tmp_path / 'nsp.conf'
    conf.write_text('[policy_store]\nconnection = '
                    'sqlite:////nonexistent/dir/store.db\n')
    upgrade = subprocess.run(
        [os.path.join(BIN, 'nova-scoped-policies'), 'db', 'upgrade',
         '--config-file', str(conf)], capture_output=True, text=True,
        timeout=120)
    assert upgrade.returncode == 1
    assert 'error: [policy_store] connection:' in upgrade.stderr
