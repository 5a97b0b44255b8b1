"""``nova-scoped-policies-status upgrade check``: the ``Policy API
rules`` check of the policy API's policy file (Secure RBAC upgrade)."""

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck
import pytest

from nova_scoped_policies.cmd import status
from nova_scoped_policies import conf as nsp_conf

Code = upgradecheck.Code


def check(tmp_path, policy_file=None, enforce_new_defaults=True):
    lines = ['[oslo_policy]',
             f'enforce_new_defaults = {enforce_new_defaults}']
    if policy_file is not None:
        (tmp_path / 'policy.yaml').write_text(policy_file)
    path = tmp_path / 'nova-scoped-policies.conf'
    path.write_text('\n'.join(lines) + '\n')
    conf = cfg.ConfigOpts()
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[str(path)])
    return status._check_policy_file(status.Checks(conf))


def test_it_is_one_of_the_checks():
    assert ('Policy API rules', status._check_policy_file) in \
        status.Checks._upgrade_checks


def test_no_policy_file_is_the_new_defaults(tmp_path):
    found = check(tmp_path)
    assert found.code == Code.SUCCESS, found.details
    assert 'no policy file (policy.yaml)' in found.details


def test_a_file_overriding_only_unchanged_rules_passes(tmp_path):
    found = check(tmp_path, '"scoped_policies:scopes:create": '
                  '"role:admin or role:cloud-admin"\n')
    assert found.code == Code.SUCCESS, found.details
    assert str(tmp_path / 'policy.yaml') in found.details


@pytest.mark.parametrize('rule, old', [
    ('scoped_policies:stacks:create', '@'),
    ('scoped_policies:server_groups:update', 'rule:admin_or_owner'),
])
def test_restoring_an_old_default_warns(tmp_path, rule, old):
    found = check(tmp_path, f'"{rule}": "{old}"\n')
    assert found.code == Code.WARNING, found.details
    assert f'overrides {rule}, whose default changed to ' \
        '"rule:project_member_or_admin"' in found.details
    assert f'(deprecated: "{old}")' in found.details


def test_overriding_admin_or_owner_warns_naming_who_uses_it(tmp_path):
    found = check(tmp_path, '"admin_or_owner": "role:admin or '
                  '(role:member and project_id:%(project_id)s)"\n')
    assert found.code == Code.WARNING, found.details
    assert 'overrides admin_or_owner, whose meaning project_member_api, ' \
        'project_reader_api now take(s)' in found.details


def test_the_renamed_task_rule_warns(tmp_path):
    found = check(tmp_path, '"scoped_policies:repairs:tasks": "role:ops"\n')
    assert found.code == Code.WARNING, found.details
    assert 'scoped_policies:repairs:tasks:list' in found.details
    assert 'scoped_policies:repairs:tasks:cancel' in found.details


def test_old_defaults_ored_in_warn(tmp_path):
    found = check(tmp_path, enforce_new_defaults=False)
    assert found.code == Code.WARNING, found.details
    assert 'enforce_new_defaults = False' in found.details


def test_novas_own_policy_file_is_not_ours(tmp_path):
    found = check(tmp_path, '"admin_or_owner": "role:admin"\n'
                  '"os_compute_api:servers:index": "@"\n')
    assert found.code == Code.SUCCESS, found.details
    assert "nova's policy file" in found.details


def test_a_broken_policy_file_fails(tmp_path):
    found = check(tmp_path, '"a": [\n')
    assert found.code == Code.FAILURE, found.details
