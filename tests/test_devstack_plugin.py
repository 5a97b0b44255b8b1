"""The devstack plugin's phases, with stand-ins for devstack's helpers.

The resulting nova.conf is then read with oslo.config and nova's own
filter and weigher loaders, as nova-scheduler reads it.
"""

import getpass
import os
import subprocess
import sys

from oslo_config import cfg
from oslo_messaging import opts as messaging_opts
import pytest

import nova.conf
from nova.scheduler import filters as nova_filters
from nova.scheduler import weights as nova_weights
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.conf import ksa as nsp_ksa
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration
from nova_scoped_policies.scheduler import stores

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVSTACK_NOVA_CONF = """[DEFAULT]
debug = True

[filter_scheduler]
enabled_filters = ComputeFilter,ImagePropertiesFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter
track_instance_changes = False

[placement]
region_name = RegionOne
"""


def phase(tmp_path, *args, env=None):
    calls = tmp_path / 'calls'
    script = (f'source {ROOT}/tests/devstack/stubs.sh && '
              f'source {ROOT}/devstack/settings && '
              f'source {ROOT}/devstack/plugin.sh {" ".join(args)}')
    environ = dict(
        os.environ, PYTHON=sys.executable,
        NOVA_CONF=str(tmp_path / 'nova.conf'), DEST='/opt/stack',
        DEVSTACK_CALLS=str(calls), STACK_USER=getpass.getuser(),
        DATA_DIR=str(tmp_path / 'data'),
        NOVA_SCOPED_POLICIES_CONF_DIR=str(tmp_path / 'etc'),
        NOVA_SCOPED_POLICIES_BIN_DIR=os.path.dirname(sys.executable),
        ENABLE_DEBUG_LOG_LEVEL='True', SERVICE_LISTEN_ADDRESS='127.0.0.1',
        SERVICE_PROTOCOL='http', SERVICE_HOST='127.0.0.1',
        REGION_NAME='RegionOne', SERVICE_TIMEOUT='60', **(env or {}))
    done = subprocess.run(['bash', '-c', script], env=environ,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return calls.read_text().splitlines() if calls.exists() else []


def load(path):
    conf = cfg.ConfigOpts()
    nova.conf.scheduler.register_opts(conf)
    nova.conf.notifications.register_opts(conf)
    for group, options in messaging_opts.list_opts():
        if group == 'oslo_messaging_notifications':
            conf.register_opts(options, group=group)
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[str(path)])
    return conf


@pytest.fixture
def nova_conf(tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text(DEVSTACK_NOVA_CONF)
    return path


def test_install_sets_up_the_package(tmp_path, nova_conf):
    calls = phase(tmp_path, 'stack', 'install')
    assert 'setup_develop /opt/stack/nova-scoped-policies' in calls
    assert 'define_plugin nova-scoped-policies' in calls


def test_post_config_enables_our_plugins_through_novas_loaders(
        tmp_path, nova_conf):
    phase(tmp_path, 'stack', 'post-config')
    conf = load(nova_conf)
    fs = conf.filter_scheduler
    assert fs.available_filters == [
        'nova.scheduler.filters.all_filters',
        'nova_scoped_policies.scheduler.filters.all_filters']
    assert fs.weight_classes == [
        'nova.scheduler.weights.all_weighers',
        'nova_scoped_policies.scheduler.weights.all_weighers']
    # nova's own values are kept, ours added
    assert fs.enabled_filters == [
        'ComputeFilter', 'ImagePropertiesFilter',
        'ServerGroupAntiAffinityFilter', 'ServerGroupAffinityFilter',
        'ScopedAffinityFilter', 'ScopedAntiAffinityFilter']
    assert fs.track_instance_changes is False
    # nova-scheduler finds every enabled filter among the available ones
    classes = {c.__name__: c for c in
               nova_filters.HostFilterHandler().get_matching_classes(
                   fs.available_filters)}
    assert set(fs.enabled_filters) <= set(classes)
    weighers = {c.__name__ for c in
                nova_weights.HostWeightHandler().get_matching_classes(
                    fs.weight_classes)}
    assert {'ScopedSoftAffinityWeigher',
            'ScopedSoftAntiAffinityWeigher', 'RAMWeigher'} <= weighers
    sp = conf.scoped_policies
    assert sp.enable_scoped_policy_query_filter is True
    assert sp.enable_forbidden_aggregates_filter is False
    assert sp.aggregate_refresh_interval == 30
    # the nova seam, and the versioned notifications its listener reads
    assert sp.nova_seam is True
    assert conf.notifications.notification_format == 'both'
    assert conf.oslo_messaging_notifications.driver == ['messagingv2']
    assert ('rabbitmqctl set_policy nova-scoped-policies-aggregates '
            '^nova-scoped-policies-aggregates\\. {"expires":600000} '
            '--apply-to queues') in (tmp_path / 'calls').read_text()


def test_post_config_is_idempotent_and_takes_settings(tmp_path, nova_conf):
    env = {'NOVA_SCOPED_POLICIES_FORBIDDEN_AGGREGATES': 'yes',
           'NOVA_SCOPED_POLICIES_QUERY_FILTER': 'False'}
    phase(tmp_path, 'stack', 'post-config', env=env)
    once = nova_conf.read_text()
    phase(tmp_path, 'stack', 'post-config', env=env)
    assert nova_conf.read_text() == once
    sp = load(nova_conf).scoped_policies
    assert sp.enable_forbidden_aggregates_filter is True
    assert sp.enable_scoped_policy_query_filter is False


def test_post_config_on_a_nova_conf_without_filters(tmp_path):
    (tmp_path / 'nova.conf').write_text('[DEFAULT]\n')
    phase(tmp_path, 'stack', 'post-config')
    fs = load(tmp_path / 'nova.conf').filter_scheduler
    assert 'ServerGroupAffinityFilter' in fs.enabled_filters
    assert fs.enabled_filters[-2:] == ['ScopedAffinityFilter',
                                       'ScopedAntiAffinityFilter']


def test_post_config_sets_up_the_policy_service_and_store(
        tmp_path, nova_conf):
    calls = phase(tmp_path, 'stack', 'post-config')
    assert 'create_service_user nova-scoped-policies admin' in calls
    service = cfg.ConfigOpts()
    nsp_conf.register_opts(service)
    service([], default_config_files=[
        str(tmp_path / 'etc' / 'nova-scoped-policies.conf')])
    url = f'sqlite:///{tmp_path}/data/nova-scoped-policies/' \
        'policy-store.sqlite'
    assert service.policy_store.connection == url
    assert service.scoped_policies_api.auth_strategy == 'keystone'
    assert service.scoped_policies_api.bind_port == 8799
    # Placement and Nova credentials of the service user (keystonemiddleware
    # registers [keystone_authtoken] itself when the service starts)
    for group in ('placement', 'nova'):
        nsp_ksa.register_ks_opts(service, group)
        assert service[group].auth_type == 'password', group
    assert '[keystone_authtoken]' in (
        tmp_path / 'etc' / 'nova-scoped-policies.conf').read_text()
    # the database exists at the newest schema
    store = store_api.PolicyStore(url)
    assert migration.version(store.engine) is not None
    # nova-scheduler reads the same store through the sql driver
    conf = load(nova_conf)
    assert conf.scoped_policies.store_driver == 'sql'
    assert conf.policy_store.connection == url
    driver = stores.load_driver('sql', conf)
    assert driver.scopes() == []


def test_post_config_gives_the_schedulers_user_the_service_role(
        tmp_path, nova_conf):
    calls = phase(tmp_path, 'stack', 'post-config',
                  env={'SERVICE_PROJECT_NAME': 'service'})
    assert 'get_or_create_role service' in calls
    assert 'get_or_add_user_project_role service nova service' in calls
    # the sql driver by default: no [policy_api] credentials
    assert load(nova_conf).scoped_policies.store_driver == 'sql'
    assert '[policy_api]' not in nova_conf.read_text()


def test_the_http_store_driver_reads_the_api_as_nova_with_service_role(
        tmp_path, nova_conf):
    calls = phase(tmp_path, 'stack', 'post-config',
                  env={'SERVICE_PROJECT_NAME': 'service',
                       'NOVA_SCOPED_POLICIES_STORE_DRIVER': 'http'})
    assert 'get_or_add_user_project_role service nova service' in calls
    conf = load(nova_conf)
    assert conf.scoped_policies.store_driver == 'http'
    nsp_ksa.register_ks_opts(conf, 'policy_api')
    assert conf.policy_api.auth_type == 'password'
    assert '[policy_api]' in nova_conf.read_text()
    assert 'username = nova' in nova_conf.read_text()
    assert conf.policy_store.connection != f'sqlite:///{tmp_path}/data/' \
        'nova-scoped-policies/policy-store.sqlite'


def test_extra_starts_the_api_and_creates_the_example_scope(tmp_path,
                                                            nova_conf):
    calls = phase(tmp_path, 'stack', 'extra',
                  env={'NOVA_SCOPED_POLICIES_HOST': 'compute-1'})
    bindir = os.path.dirname(sys.executable)
    assert (f'run_process nova-scoped-policies-api {bindir}/'
            'nova-scoped-policies-api --config-file '
            f'{tmp_path}/etc/nova-scoped-policies.conf') in calls
    assert ('get_or_create_endpoint scoped-policies RegionOne '
            'http://127.0.0.1:8799') in calls
    assert ('openstack --os-cloud devstack-admin aggregate create -f value '
            '-c uuid rack-1') in calls
    assert ('openstack --os-cloud devstack-admin scoped policy scope create rack '
            '--aggregate 00000000-0000-4000-8000-0000000000a1') in calls
    assert 'stop_process nova-scoped-policies-api' in phase(tmp_path,
                                                            'unstack')


def test_extra_without_the_api_uses_aggregate_metadata(tmp_path, nova_conf):
    calls = phase(tmp_path, 'stack', 'extra',
                  env={'NOVA_SCOPED_POLICIES_HOST': 'compute-1',
                       'NOVA_SCOPED_POLICIES_API': 'False'})
    assert not any('run_process' in c for c in calls)
    assert ('openstack --os-cloud devstack-admin aggregate create -f value '
            '-c uuid --property policy_scope=rack rack-1') in calls
    assert ('openstack --os-cloud devstack-admin aggregate add host '
            'rack-1 compute-1') in calls
    calls = phase(tmp_path, 'stack', 'extra',
                  env={'NOVA_SCOPED_POLICIES_EXAMPLE_SCOPE': ''})
    assert not any('aggregate create' in c for c in calls[-1:])


def test_clean_undoes_post_config(tmp_path, nova_conf):
    phase(tmp_path, 'stack', 'post-config')
    calls = phase(tmp_path, 'clean')
    assert 'pip_uninstall nova-scoped-policies' in calls
    conf = load(nova_conf)
    fs = conf.filter_scheduler
    assert fs.enabled_filters == [
        'ComputeFilter', 'ImagePropertiesFilter',
        'ServerGroupAntiAffinityFilter', 'ServerGroupAffinityFilter']
    assert fs.available_filters == ['nova.scheduler.filters.all_filters']
    assert fs.weight_classes == ['nova.scheduler.weights.all_weighers']
    text = nova_conf.read_text()
    for option in ('enable_scoped_policy_query_filter',
                   'enable_forbidden_aggregates_filter',
                   'aggregate_refresh_interval', 'nova_scoped_policies',
                   'store_driver', 'policy-store.sqlite'):
        assert option not in text
    assert not (tmp_path / 'etc').exists()
    assert not (tmp_path / 'data' / 'nova-scoped-policies' /
                'policy-store.sqlite').exists()
    phase(tmp_path, 'unstack')


def test_the_dashboard_is_installed_and_enabled_in_horizon(tmp_path,
                                                           nova_conf):
    horizon = tmp_path / 'horizon'
    enabled = horizon / 'openstack_dashboard' / 'local' / 'enabled'
    env = {'NOVA_SCOPED_POLICIES_DASHBOARD': 'True', 'HORIZON_DIR':
           str(horizon), 'NOVA_SCOPED_POLICIES_DIR': ROOT}
    calls = phase(tmp_path, 'stack', 'install', env=env)
    assert f'setup_develop {ROOT} dashboard' in calls
    phase(tmp_path, 'stack', 'post-config', env=env)
    ours = sorted(os.listdir(os.path.join(
        ROOT, 'nova_scoped_policies', 'dashboard', 'enabled')))
    ours.remove('__init__.py')
    ours = [n for n in ours if n.endswith('.py')]
    assert len(ours) == 7
    assert sorted(p.name for p in enabled.iterdir()) == ours
    # each file is Horizon's pluggable settings: a panel or a group of ours
    for name in ours:
        text = (enabled / name).read_text()
        assert "PANEL_GROUP = 'scoped_policies'" in text, name
    phase(tmp_path, 'clean', env=env)
    assert list(enabled.iterdir()) == []


def test_the_dashboard_is_off_by_default(tmp_path, nova_conf):
    horizon = tmp_path / 'horizon'
    calls = phase(tmp_path, 'stack', 'install', env={
        'HORIZON_DIR': str(horizon), 'NOVA_SCOPED_POLICIES_WATCHER': 'True'})
    assert 'setup_develop /opt/stack/nova-scoped-policies watcher' in calls
    phase(tmp_path, 'stack', 'post-config', env={'HORIZON_DIR':
                                                 str(horizon)})
    assert not horizon.exists()


def _tempest_venv(tmp_path):
    """A stand-in for Tempest's virtualenv whose pip records its calls."""
    venv = tmp_path / 'tempest-venv'
    (venv / 'bin').mkdir(parents=True)
    pip = venv / 'bin' / 'pip'
    pip.write_text(f'#!/bin/sh\necho "tempest-pip $*" >> {tmp_path}/calls\n')
    pip.chmod(0o755)
    return venv


def test_the_tempest_plugin_goes_into_tempests_venv(tmp_path, nova_conf):
    tempest_conf = tmp_path / 'tempest.conf'
    tempest_conf.write_text('[service_available]\nnova = True\n')
    venv = _tempest_venv(tmp_path)
    calls = phase(tmp_path, 'stack', 'test-config', env={
        'NOVA_SCOPED_POLICIES_TEMPEST': 'True',
        'NOVA_SCOPED_POLICIES_TEMPEST_VENV': str(venv),
        'TEMPEST_CONFIG': str(tempest_conf)})
    assert ('tempest-pip install --no-deps -e '
            '/opt/stack/nova-scoped-policies') in calls
    conf = cfg.ConfigParser(str(tempest_conf), {})
    conf.parse()
    assert conf.sections['service_available']['scoped_policies'] == ['True']
    assert conf.sections['service_available']['nova'] == ['True']
    assert conf.sections['scoped_policies']['scope'] == ['rack']
    assert conf.sections['scoped_policies']['store_cache_ttl'] == ['10']


def test_the_tempest_plugin_is_off_by_default(tmp_path, nova_conf):
    tempest_conf = tmp_path / 'tempest.conf'
    tempest_conf.write_text('')
    calls = phase(tmp_path, 'stack', 'test-config', env={
        'NOVA_SCOPED_POLICIES_TEMPEST_VENV': str(_tempest_venv(tmp_path)),
        'TEMPEST_CONFIG': str(tempest_conf)})
    assert not any('tempest-pip' in c for c in calls)
    assert tempest_conf.read_text() == ''
