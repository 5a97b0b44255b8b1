"""The docs, the release notes and the sample config build cleanly.

Sphinx runs with warnings as errors, as the docs job would.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, '-m', *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize('source', ['doc/source', 'releasenotes/source'])
def test_sphinx_build_without_warnings(source, tmp_path):
    found = run('sphinx', '-W', '--keep-going', '-q', '-b', 'html',
                source, str(tmp_path))
    assert found.returncode == 0, found.stdout + found.stderr


def test_release_notes_lint():
    found = subprocess.run(
        [sys.executable, '-c', 'import sys, reno.main; '
         'sys.exit(reno.main.main(["lint"]))'],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert found.returncode == 0, found.stdout + found.stderr


def test_config_generator(tmp_path):
    sample = tmp_path / 'sample.conf'
    found = run('oslo_config.generator', '--config-file',
                'etc/nova-scoped-policies/config-generator.conf',
                '--output-file', str(sample))
    assert found.returncode == 0, found.stderr
    text = sample.read_text()
    for expected in ('[scoped_policies]', '#enable_scoped_policy_query_filter'
                     ' = false', '[placement]', 'debug = false',
                     '[scoped_policies_api]', '#max_group_members = 1000',
                     '[policy_store]', '[policy_api]', '#store_driver =',
                     '[keystone_authtoken]', '[oslo_policy]'):
        assert expected in text


def test_policy_sample_generator(tmp_path):
    sample = tmp_path / 'policy.yaml'
    found = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable),
                      'oslopolicy-sample-generator'), '--namespace',
         'nova_scoped_policies.api', '--output-file', str(sample)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, found.stderr
    text = sample.read_text()
    for expected in ('"scoped_policies:scopes:create": "rule:admin_api"',
                     '"scoped_policies:server_groups:audit": '
                     '"rule:project_reader_or_admin"',
                     '"scoped_policies:stacks:create": '
                     '"rule:project_member_or_admin"',
                     '"project_reader_api": "role:reader and '
                     'project_id:%(project_id)s"',
                     '"scoped_policies:real_ids": "rule:service_or_admin"'):
        assert expected in text
