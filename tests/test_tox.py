"""tox.ini calls the project's own commands, so tox and the README agree."""

import configparser
import pathlib
import re

ROOT = pathlib.Path(__file__).parents[1]


def envs():
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / 'tox.ini')
    base = parser['testenv']
    found = {'py3': base['commands'].strip()}
    for section in parser.sections():
        if section.startswith('testenv:'):
            found[section.split(':', 1)[1]] = parser[section].get(
                'commands', base['commands']).strip()
    return parser, found


def test_usual_envs_exist():
    parser, found = envs()
    listed = parser['tox']['envlist'].split(',')
    for env in ('py3', 'functional', 'docs', 'genconfig', 'releasenotes'):
        assert env in found and env in listed, env


def test_envs_run_the_readme_commands():
    readme = (ROOT / 'README.md').read_text()
    commands = re.findall(r'^\$ (tools/\S+)', readme, re.M)
    assert commands == ['tools/simulate.sh', 'tools/run-tests.sh']
    _, found = envs()
    assert found['all'] == 'bash tools/run-tests.sh {posargs}'
    assert found['py3'].startswith('bash tools/run-tests.sh tests/unit')
    assert found['functional'].startswith(
        'bash tools/run-tests.sh tests/functional')
    assert found['simulate'].startswith('bash tools/simulate.sh')
    assert found['genconfig'] == 'bash tools/genconfig.sh'
    for env, command in found.items():
        assert (ROOT / 'tools').exists()
        for script in re.findall(r'tools/[\w-]+\.sh', command):
            assert (ROOT / script).exists(), (env, script)


def test_every_env_uses_the_pinned_virtualenv():
    parser, _ = envs()
    base = parser['testenv']
    assert 'NSP_VENV = {envdir}' in base['setenv']
    assert "source tools/venv.sh" in base['commands_pre']
