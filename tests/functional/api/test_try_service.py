"""``nova-scoped-policies-manage try`` as an operator runs it: a process
that starts a real Placement and the policy API, prints the CLI's
environment, serves the ``openstack`` commands of doc/source/admin/
service.rst ("Try it first") with the outputs shown there, and stops its
children and removes its directory on SIGINT."""

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys

import psutil
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BIN = os.path.dirname(sys.executable)
SERVICE_RST = os.path.join(ROOT, 'doc', 'source', 'admin', 'service.rst')
UUID = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'


class Trial:
    """The running command: its process, what it printed, the CLI's
    environment and its directory."""

    def __init__(self, command=(os.path.join(
            BIN, 'nova-scoped-policies-manage'), 'try')) -> None:
        self.process = subprocess.Popen(
            list(command) + ['--port', '0', '--placement-port', '0'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=ROOT, env=dict(os.environ, NSP_VENV=os.path.dirname(BIN)))
        self.lines = []
        for line in self.process.stdout:
            self.lines.append(line.rstrip('\n'))
            if line.startswith('# Ctrl-C'):
                break
        else:
            self.process.wait(timeout=60)
            pytest.fail('try ended before serving: '
                        + self.process.stderr.read())
        self.exports = dict(re.findall(r'^export (\w+)=(\S+)$',
                                       '\n'.join(self.lines), re.M))
        self.directory = re.search(r'removes (\S+)$',
                                   self.lines[-1]).group(1)
        self.children = psutil.Process(self.process.pid).children(
            recursive=True)

    def openstack(self, argv, **identity):
        """Run ``openstack argv`` in the printed environment (and
        ``identity``: OS_ variables to change, None to drop)."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('OS_')}
        env.update(self.exports)
        for name, value in identity.items():
            env.pop(name, None)
            if value is not None:
                env[name] = value
        env['PATH'] = BIN + os.pathsep + env.get('PATH', '')
        return subprocess.run([os.path.join(BIN, 'openstack')] + argv,
                              capture_output=True, text=True, timeout=120,
                              env=env, cwd=ROOT)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=60)


@pytest.fixture(scope='module')
def trial():
    found = Trial()
    yield found
    found.stop()
    for child in found.children:
        if child.is_running():
            child.kill()


def walkthrough():
    """(command, documented output) of every ``$ openstack`` command of
    service.rst's "Try it first", in order."""
    with open(SERVICE_RST, encoding='utf-8') as handle:
        text = handle.read()
    section = text[text.index('Try it first\n'):
                   text.index('Without Nova\n')]
    found, current = [], None
    for line in section.splitlines():
        if line.startswith('    $ '):
            current = None
            if line.startswith('    $ openstack '):
                current = (line[len('    $ openstack '):], [])
                found.append(current)
        elif current is not None and line.startswith('    '):
            current[1].append(line[4:])
        elif current is not None and line.strip():
            current = None
    return [(command, '\n'.join(out).rstrip('\n'))
            for command, out in found]


def test_the_environment_printed(trial):
    assert trial.exports == {
        'OS_AUTH_TYPE': 'none',
        'OS_SCOPED_POLICIES_ENDPOINT': trial.exports[
            'OS_SCOPED_POLICIES_ENDPOINT'],
        'OS_SCOPED_POLICIES_PROJECT_ID': 'demo',
        'OS_SCOPED_POLICIES_ROLES': 'admin'}
    assert re.fullmatch(r'http://127\.0\.0\.1:\d+',
                        trial.exports['OS_SCOPED_POLICIES_ENDPOINT'])
    assert os.path.isdir(trial.directory)
    # two children: Placement and the policy API
    assert len(trial.children) == 2, trial.children


def test_the_walkthrough_of_service_rst(trial):
    """Every command shown, in order, with the output shown (a stack's id
    and the directory's name differ from run to run)."""
    steps = walkthrough()
    shown = [command.split()[:4] for command, _ in steps]
    for needed in (['scoped', 'policy', 'scope', 'list'],
                   ['scoped', 'policy', 'group', 'set'],
                   ['scoped', 'policy', 'group', 'audit'],
                   ['scoped', 'policy', 'stack', 'create'],
                   ['scoped', 'policy', 'stack', 'show'],
                   ['scoped', 'policy', 'repair', 'plan']):
        assert needed in shown
    for command, expected in steps:
        argv = shlex.split(command.replace(' 2>/dev/null', ''))
        done = trial.openstack(argv)
        assert done.returncode == 0, (command, done.stderr)
        got = done.stdout.rstrip('\n')
        if 'stack audit' in command:
            got = re.sub(UUID, 'ID', got)
            expected = re.sub(UUID, 'ID', expected)
        assert got == expected, command
        if '-f json' in command:
            assert json.loads(done.stdout)
        # no eventlet warning, no Python warning of any kind
        assert 'Warning' not in done.stderr, done.stderr


def test_rules_are_numbers(trial):
    done = trial.openstack(['scoped', 'policy', 'group', 'set', 'db',
                            '--policy', 'anti-affinity:rack', '--rule',
                            'max_server_per_rack=2'])
    assert done.returncode == 0, done.stderr
    assert re.search(r'\| rules +\| max_server_per_rack=2 +\|',
                     done.stdout), done.stdout
    done = trial.openstack(['scoped', 'policy', 'group', 'show', 'db',
                            '-f', 'json'])
    assert json.loads(done.stdout)['rules'] == {'max_server_per_rack': 2}


def _stack(trial) -> None:
    """The stack ``web`` of the walk-through, made if it is not yet."""
    listed = trial.openstack(['scoped', 'policy', 'stack', 'list', '-f',
                              'json'])
    if not any(s['name'] == 'web' for s in json.loads(listed.stdout)):
        done = trial.openstack(['scoped', 'policy', 'stack', 'create',
                                '--file', 'doc/source/admin/try-stack.yaml'])
        assert done.returncode == 0, done.stderr


def test_names_not_found(trial):
    _stack(trial)
    # an administrator of another project: the tenant's stack is not
    # named, nor any other of its stacks
    other = {'OS_SCOPED_POLICIES_PROJECT_ID': 'admin'}
    for argv in (['stack', 'show', 'web'], ['stack', 'audit', 'nosuch']):
        done = trial.openstack(['scoped', 'policy'] + argv, **other)
        assert done.returncode == 1
        name = argv[-1]
        assert done.stderr.strip() == (
            f"no stack named '{name}' in your project; give the id (stack "
            "list --all-projects shows every project's)")
    listed = trial.openstack(['scoped', 'policy', 'stack', 'list',
                              '--all-projects', '-f', 'json'], **other)
    stack = json.loads(listed.stdout)[0]['id']
    shown = trial.openstack(['scoped', 'policy', 'stack', 'show', stack,
                             '-f', 'json'], **other)
    assert json.loads(shown.stdout)['name'] == 'web'
    # no Nova: a group name not among the scoped groups
    done = trial.openstack(['scoped', 'policy', 'group', 'show', 'nosuch'])
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "no server group named 'nosuch' among your project's scoped "
        'groups, and Nova cannot look the name up: the compute service is '
        'not configured or not reachable (e.g. with --os-auth-type none); '
        'give the uuid')


def test_sigint_stops_the_children_and_removes_the_directory(trial):
    trial.stop()
    assert trial.process.returncode == 0
    gone, alive = psutil.wait_procs(trial.children, timeout=30)
    assert alive == []
    assert not os.path.exists(trial.directory)
    stderr = trial.process.stderr.read()
    assert 'Warning' not in stderr and 'Traceback' not in stderr, stderr
    assert f'# stopped; {trial.directory} removed' in stderr


def test_the_script_runs_the_same_command():
    """tools/try-service.sh (the venv first) execs the command: SIGINT
    reaches it and it cleans up as above."""
    script = Trial([os.path.join(ROOT, 'tools', 'try-service.sh')])
    try:
        assert script.exports['OS_SCOPED_POLICIES_PROJECT_ID'] == 'demo'
        done = script.openstack(['scoped', 'policy', 'group', 'audit', 'db',
                                 '--exit-code', '-c', 'violations'])
        assert done.returncode == 1, done.stderr
    finally:
        script.stop()
    assert script.process.returncode == 0
    assert psutil.wait_procs(script.children, timeout=30)[1] == []
    assert not os.path.exists(script.directory)


def test_a_port_in_use_is_refused_before_anything_starts():
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [os.path.join(BIN, 'nova-scoped-policies-manage'), 'try',
             '--port', str(port), '--placement-port', '0'],
            capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout == ''
    first = done.stderr.splitlines()[0]
    assert first == (f'error: --port {port}: Address already in use; '
                     'choose another port (--port 0: any free one)')
    directory = re.search(r'# stopped; (\S+) removed',
                          done.stderr).group(1)
    assert not os.path.exists(directory)


def test_scoped_policy_help_lists_the_commands_with_descriptions():
    """cliff answers a partial command's --help with names alone: the
    ``scoped policy`` command (common.Overview) answers with each
    command's first line of help."""
    done = subprocess.run(
        [os.path.join(BIN, 'openstack'), '--os-auth-type', 'none',
         'scoped', 'policy', '--help'], capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.search(r'scoped policy repair plan +Plan the fewest live '
                     r'migrations', done.stdout), done.stdout
    assert re.search(r'scoped policy group audit +Where each member runs',
                     done.stdout), done.stdout
