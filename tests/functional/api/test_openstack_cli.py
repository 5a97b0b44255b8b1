"""The ``openstack`` command itself (python-openstackclient) with our
plugin, against the policy API served over loopback with
``auth_strategy = noauth2``, as the CLI guide documents it."""

import json
import os
import re
import subprocess
import sys
import uuid

import pytest

from tests.functional.api import test_service_cli as service

BIN = os.path.dirname(sys.executable)


@pytest.fixture(scope='module')
def api_url(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('osc')
    port = service._free_port()
    conf = tmp / 'nsp.conf'
    conf.write_text(f'[policy_store]\nconnection = sqlite:///{tmp}/s.db\n'
                    f'[scoped_policies_api]\nauth_strategy = noauth2\n'
                    f'bind_port = {port}\n')
    assert service.manage('db', 'sync', '--config-file',
                          str(conf)).returncode == 0
    server = subprocess.Popen(
        [os.path.join(BIN, 'nova-scoped-policies-api'), '--config-file',
         str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f'http://127.0.0.1:{port}'
    service.wait_for(url, server)
    yield url
    server.terminate()
    server.wait(timeout=30)


def openstack(url, *argv, project=None, roles=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
    env['OS_SCOPED_POLICIES_ENDPOINT'] = url
    if roles:
        env['OS_SCOPED_POLICIES_ROLES'] = roles
    args = [os.path.join(BIN, 'openstack'), '--os-auth-type', 'none']
    if project:
        args += ['--os-scoped-policies-project-id', project]
    return subprocess.run(args + list(argv), capture_output=True,
                          text=True, timeout=120, env=env)


def tenant(project):
    """A member of ``project`` (noauth2 sends the roles given)."""
    return {'project': project, 'roles': 'member'}


def test_noauth2_mode_from_the_openstack_command(api_url):
    admin = {'project': 'admin', 'roles': 'admin'}
    done = openstack(api_url, 'scoped', 'policy', 'scope', 'create', 'rack',
                     '--allow-identifiers', '-f', 'json', **admin)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)['aggregates'] == []
    versions = openstack(api_url, 'scoped', 'policy', 'version', 'list',
                         '-f', 'json', **tenant('p1'))
    assert json.loads(versions.stdout)[0]['max_version'] == '1.5'

    group = str(uuid.uuid4())
    done = openstack(api_url, 'scoped', 'policy', 'group', 'set', group,
                     '--policy', 'anti-affinity:rack', '--policy',
                     'anti-affinity:host', '--rule', 'max_server_per_rack=2',
                     '--name', 'db', **tenant('p1'))
    assert done.returncode == 0, done.stderr
    # lists and dicts as openstackclient prints them, never Python reprs
    assert re.search(r'\| policies +\| anti-affinity:(rack|host), '
                     r'anti-affinity:(rack|host) ', done.stdout), done.stdout
    # a number as a number (openstackclient's DictColumn quoted it: '2')
    assert re.search(r'\| rules +\| max_server_per_rack=2 +\|',
                     done.stdout), done.stdout
    assert '[' not in done.stdout and '{' not in done.stdout
    # names where they are unique
    shown = openstack(api_url, 'scoped', 'policy', 'group', 'show', 'db',
                      '-f', 'json', **tenant('p1'))
    assert json.loads(shown.stdout)['id'] == group
    assert json.loads(shown.stdout)['rules'] == {'max_server_per_rack': 2}
    audit = openstack(api_url, 'scoped', 'policy', 'group', 'audit', 'db',
                      '--exit-code', '-f', 'json', **tenant('p1'))
    assert audit.returncode == 0, audit.stderr
    assert json.loads(audit.stdout)['violations'] == []
    # other projects see nothing of it
    assert json.loads(openstack(
        api_url, 'scoped', 'policy', 'group', 'list', '-f', 'json',
        **tenant('p2')).stdout) == []
    listed = openstack(api_url, 'scoped', 'policy', 'group', 'list',
                       '--all-projects', '-f', 'json', **admin)
    assert [g['id'] for g in json.loads(listed.stdout)] == [group]
    deleted = openstack(api_url, 'scoped', 'policy', 'group', 'delete',
                        'db', **tenant('p1'))
    assert deleted.returncode == 0, deleted.stderr
    assert json.loads(openstack(
        api_url, 'scoped', 'policy', 'group', 'list', '-f', 'json',
        **tenant('p1')).stdout) == []
    # no identity: the API's 401, said in one line
    anonymous = openstack(api_url, 'scoped', 'policy', 'scope', 'list')
    assert anonymous.returncode == 1
    assert '401' in anonymous.stderr and 'Traceback' not in \
        anonymous.stderr
