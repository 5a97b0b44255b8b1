"""``tempest run --regex nova_scoped_policies`` against a cloud of
separate processes, as an operator runs the plugin against theirs.

The cloud (``tests.functional.cloud``): Keystone 30 (from
``.venv-horizon``) with keystonemiddleware in front of nova-api and the
policy API; nova-api, nova-conductor and two nova-schedulers; one
``nova-compute`` on nova's fake driver per host, the hosts in racks; a
real Placement; the policy API, whose store the schedulers read. Tempest
47 runs from its own virtualenv (``.venv-tempest``, tools/tempest-venv.sh)
with a tempest.conf written here, and makes its projects and users in
that Keystone.

Two runs against one cloud, one after the other:

* with three racks (``rack-1`` and ``rack-2`` of two hosts, ``rack-3`` of
  one), the domains of the scope ``rack``: every test passes, and nothing
  the tests made is left (no server, scoped group, stack or scope of
  theirs). The persona tests of Secure RBAC (issue #46) run when the
  policy API's rules know the reader role, and are skipped, saying so,
  before.
* without racks (the scope ``rack`` deleted: the aggregates are no
  domain of anything): every test that needs the scope or its domains is
  skipped, each with its reason; the others pass.

Each run's output, tempest.conf and list of tests, and the cloud's logs,
are kept in ``.test-artifacts/tempest/``; pytest's report ends with what
was skipped and why, and how long each run took.
"""

import collections
import dataclasses
import os
import re
import shutil
import subprocess
import time

import pytest

from nova_scoped_policies.api import policies
from tests.functional import cloud
from tests.functional.cloud import serve

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
ARTIFACTS = os.path.join(ROOT, '.test-artifacts', 'tempest')
RACKS = collections.OrderedDict([('rack-1', ['h11', 'h12']),
                                 ('rack-2', ['h21', 'h22']),
                                 ('rack-3', ['h31'])])
REGEX = r'^nova_scoped_policies\.tempest\.'
RUN_TIMEOUT = 1800
LINE = re.compile(r'^\{\d+\} (?P<id>.+?)(?: \[[\d.]+s\])? \.\.\. '
                  r'(?P<status>ok|FAILED|SKIPPED)(?:: (?P<reason>.*))?$')
CLASS_SKIP = re.compile(r'^setUpClass \((?P<cls>[\w.]+)\)$')
PERSONAS = 'nova_scoped_policies.tempest.tests.api.test_personas.'


def tempest_venv() -> str:
    venv = os.environ.get('NSP_TEMPEST_VENV') or os.path.join(
        ROOT, '.venv-tempest')
    if not os.path.exists(os.path.join(venv, 'bin', 'tempest')):
        pytest.fail(f'Tempest is not installed in {venv}: run '
                    'tools/tempest-venv.sh (tools/run-tests.sh does)')
    return venv


def secure_rbac() -> bool:
    """Whether the policy API's default rules know the reader persona
    (issue #46): then the persona tests must run and pass."""
    return any('role:reader' in str(rule.check_str)
               for rule in policies.list_rules())


def tempest_conf(deployed: cloud.Cloud, workspace: str) -> str:
    """tempest.conf for the cloud: Keystone's admin makes the tests'
    projects and users; servers boot from the stub image with no network.
    """
    return cloud._ini({
        'DEFAULT': {'log_dir': os.path.join(workspace, 'logs'),
                    'log_file': 'tempest.log'},
        'oslo_concurrency': {'lock_path': os.path.join(workspace, 'locks')},
        'auth': {'use_dynamic_credentials': 'true',
                 'admin_username': 'admin',
                 'admin_password': deployed.keystone.password,
                 'admin_project_name': 'admin',
                 'admin_domain_name': 'Default'},
        'identity': {'uri_v3': f'{deployed.keystone.url}/v3',
                     'auth_version': 'v3', 'region': 'RegionOne'},
        'service_available': {'nova': 'true', 'neutron': 'false',
                              'glance': 'false', 'cinder': 'false',
                              'swift': 'false', 'scoped_policies': 'true'},
        'compute': {'image_ref': serve.IMAGE['id'],
                    'flavor_ref': cloud.FLAVOR, 'build_timeout': 180,
                    'build_interval': 1},
        'compute-feature-enabled': {'live_migration': 'true'},
        'validation': {'run_validation': 'false'},
        'scoped_policies': {'scope': 'rack', 'store_cache_ttl': 0,
                            'secure_rbac': str(secure_rbac()).lower()},
    })


@dataclasses.dataclass
class Run:
    """What ``tempest run`` did: its exit code, its output, each test's
    status (``ok``, ``FAILED``, ``SKIPPED``) and skip reason, the tests
    it listed, and how long it took."""

    returncode: int
    output: str
    results: dict
    listed: list
    seconds: float

    def status(self, test: str):
        """(status, reason) of a listed test; a test of a class whose
        set-up was skipped has the class's."""
        if test in self.results:
            return self.results[test]
        cls = test.rpartition('.')[0]
        return self.results.get(f'setUpClass ({cls})', ('not run', ''))

    def statuses(self) -> dict:
        return {test: self.status(test) for test in self.listed}

    def counts(self) -> collections.Counter:
        return collections.Counter(s for s, _ in self.statuses().values())


def _tempest(venv: str, workspace: str, *args, timeout=RUN_TIMEOUT):
    env = dict(os.environ, PATH=os.path.join(venv, 'bin') + os.pathsep +
               os.environ['PATH'], no_proxy='127.0.0.1,localhost',
               NO_PROXY='127.0.0.1,localhost')
    return subprocess.run(
        [os.path.join(venv, 'bin', 'tempest'), 'run', '--config-file',
         os.path.join(workspace, 'etc', 'tempest.conf'), '--regex', REGEX,
         *args], cwd=workspace, env=env, capture_output=True, text=True,
        timeout=timeout)


def run_tempest(deployed: cloud.Cloud, name: str, tmp_path) -> Run:
    """``tempest run --regex nova_scoped_policies`` against ``deployed``;
    its output kept in ``.test-artifacts/tempest/<name>.log``."""
    venv = tempest_venv()
    workspace = str(tmp_path / 'tempest')
    for folder in ('etc', 'logs', 'locks'):
        os.makedirs(os.path.join(workspace, folder))
    conf = tempest_conf(deployed, workspace)
    with open(os.path.join(workspace, 'etc', 'tempest.conf'), 'w') as out:
        out.write(conf)
    os.makedirs(ARTIFACTS, exist_ok=True)
    subprocess.run([os.path.join(venv, 'bin', 'stestr'), 'init'],
                   cwd=workspace, check=True, capture_output=True)
    listing = _tempest(venv, workspace, '--list-tests', timeout=300)
    assert listing.returncode == 0, listing.stdout + listing.stderr
    listed = sorted({re.sub(r'\[.*\]$', '', line.strip())
                     for line in listing.stdout.splitlines()
                     if line.startswith('nova_scoped_policies.')})
    started = time.monotonic()
    done = _tempest(venv, workspace, '--concurrency', '2')
    seconds = time.monotonic() - started
    results = {}
    for line in done.stdout.splitlines():
        found = LINE.match(line.strip())
        if found:
            test = re.sub(r'\[.*\]$', '', found['id'])
            results[test] = (found['status'], found['reason'] or '')
    with open(os.path.join(ARTIFACTS, f'{name}.log'), 'w') as out:
        out.write(done.stdout + done.stderr)
    with open(os.path.join(ARTIFACTS, f'{name}.tests'), 'w') as out:
        out.write('\n'.join(listed) + '\n')
    with open(os.path.join(ARTIFACTS, f'{name}.conf'), 'w') as out:
        out.write(conf)
    return Run(done.returncode, done.stdout + done.stderr, results, listed,
               seconds)


def report(lines: list, name: str, run: Run) -> None:
    counts = run.counts()
    lines.append(f'{name}: {len(run.listed)} tests in {run.seconds:.0f} s: '
                 f'{counts["ok"]} passed, {counts["SKIPPED"]} skipped, '
                 f'{counts["FAILED"]} failed')
    for test, (status, reason) in sorted(run.statuses().items()):
        if status != 'ok':
            lines.append(f'  {status} {test.split(".", 3)[3]}: {reason}')


def _failures(run: Run) -> str:
    failed = [t for t, (s, _) in run.statuses().items() if s != 'ok' and
              s != 'SKIPPED']
    return f'{failed}\n{run.output[-20000:]}'


@pytest.fixture(scope='module')
def deployed():
    logs = os.path.join(ARTIFACTS, 'cloud-logs')
    shutil.rmtree(logs, ignore_errors=True)
    os.makedirs(logs)
    yield from cloud.running(RACKS, logs, schedulers=2, keystone=True,
                             policy_api=True, options={'store_cache_ttl': 0})


def leftovers(deployed: cloud.Cloud) -> dict:
    """What is left in the cloud of what tests make."""
    version = {'OpenStack-API-Version': 'scoped-policies 1.1'}
    return {
        'servers': deployed.admin.get(
            '/servers?all_tenants=1').json()['servers'],
        'scoped groups': deployed.policy.get(
            '/os-server-groups?all_projects=true').json()['server_groups'],
        'stacks': deployed.policy.get('/stacks?all_projects=true',
                                      headers=version).json()['stacks'],
        'scopes': [s['name'] for s in deployed.policy.get(
            '/os-policy-scopes').json()['policy_scopes']
            if s['name'] != 'rack'],
    }


def test_tempest_passes_against_a_cloud_with_racks(deployed, tmp_path,
                                                   tempest_report):
    run = run_tempest(deployed, 'racks', tmp_path)
    report(tempest_report, 'tempest run, 3 racks', run)
    assert len(run.listed) > 40, run.output[-5000:]
    assert run.returncode == 0, _failures(run)
    skipped = {t for t, (s, _) in run.statuses().items() if s != 'ok'}
    if secure_rbac():
        assert not skipped, skipped
    else:
        assert skipped == {t for t in run.listed if t.startswith(PERSONAS)}
        assert all('secure_rbac is False' in run.status(t)[1]
                   for t in skipped)
    # every test cleaned up what it made
    assert leftovers(deployed) == {'servers': [], 'scoped groups': [],
                                   'stacks': [], 'scopes': []}


def test_tempest_skips_what_a_cloud_without_racks_lacks(deployed, tmp_path,
                                                        tempest_report):
    rack = deployed.policy.get('/os-policy-scopes/rack').json()[
        'policy_scope']
    deployed.policy.delete('/os-policy-scopes/rack')
    try:
        run = run_tempest(deployed, 'no-racks', tmp_path)
    finally:
        deployed.policy.post('/os-policy-scopes', json={'policy_scope': {
            'name': 'rack', 'aggregates': rack['aggregates']}})
    report(tempest_report, 'tempest run, no racks', run)
    assert run.returncode == 0, _failures(run)
    statuses = run.statuses()
    assert set(s for s, _ in statuses.values()) == {'ok', 'SKIPPED'}, \
        _failures(run)
    for test, (status, reason) in statuses.items():
        if status == 'SKIPPED':
            assert reason.strip(), f'{test} skipped without a reason'
    scenario = [t for t in run.listed if '.tests.scenario.' in t]
    assert scenario
    for test in scenario:
        status, reason = statuses[test]
        assert status == 'SKIPPED', test
        assert 'scope rack' in reason, (test, reason)
    # what needs no rack still runs: scopes of the tests' own making
    assert statuses['nova_scoped_policies.tempest.tests.api.test_scopes.'
                    'ScopesTest.test_create_change_and_delete_a_scope'][0] \
        == 'ok'
