"""What an export writes as the scenario's ``config``: nova-scheduler's
options read from ``[scoped_policies_api] scheduler_config_files``
(nova_scoped_policies.api.export.scheduler_config)."""

from unittest import mock

from oslo_config import cfg
import pytest

from nova_scoped_policies.api import export as reader
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies import errors
from nova_scoped_policies import export
from nova_scoped_policies.simulator import scenario as sc

NOVA_CONF = """
[DEFAULT]
debug = true
[filter_scheduler]
available_filters = nova.scheduler.filters.all_filters
available_filters = nova_scoped_policies.scheduler.filters.all_filters
enabled_filters = ComputeFilter,ScopedAffinityFilter,ScopedAntiAffinityFilter
ram_weight_multiplier = -2.0
host_subset_size = 4
[scoped_policies]
enable_scoped_policy_query_filter = true
soft_affinity_weight_multiplier = 3.0
store_driver = sql
"""


def service_conf(files=(), **ours):
    conf = cfg.ConfigOpts()
    # groups of its own: the modules' OptGroups share their options'
    # overrides between every ConfigOpts they are registered on
    for group in ('scoped_policies', 'scoped_policies_api'):
        conf.register_group(cfg.OptGroup(group))
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override('scheduler_config_files', list(files),
                      group='scoped_policies_api')
    for name, value in ours.items():
        conf.set_override(name, value, group='scoped_policies')
    return conf


@pytest.fixture
def nova_conf(tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text(NOVA_CONF)
    return str(path)


def test_without_files_the_services_own_options():
    found = reader.scheduler_config(service_conf(
        enable_forbidden_aggregates_filter=True))
    assert found.filter_scheduler is None
    assert found.scenario() == {
        'allow_policy_hint': True, 'enable_forbidden_aggregates_filter': True,
        'enable_scoped_plan_filter': True,
        'enable_scoped_policy_query_filter': False,
        'max_query_aggregates': 200}


def test_nova_schedulers_options_typed_by_novas(nova_conf):
    config = reader.scheduler_config(service_conf([nova_conf])).scenario()
    scheduler = config.pop('filter_scheduler')
    assert config == {
        'allow_policy_hint': True, 'enable_forbidden_aggregates_filter': False,
        'enable_scoped_plan_filter': True,
        'enable_scoped_policy_query_filter': True,
        'max_query_aggregates': 200, 'soft_affinity_weight_multiplier': 3.0}
    assert scheduler['enabled_filters'] == [
        'ComputeFilter', 'ScopedAffinityFilter', 'ScopedAntiAffinityFilter']
    assert scheduler['available_filters'] == [
        'nova.scheduler.filters.all_filters',
        'nova_scoped_policies.scheduler.filters.all_filters']
    assert scheduler['ram_weight_multiplier'] == -2.0
    # nova's defaults for what the file leaves out: the cloud runs them
    assert scheduler['weight_classes'] == [
        'nova.scheduler.weights.all_weighers']
    assert scheduler['cpu_weight_multiplier'] == 1.0
    # held at one value by the simulator: left out
    for name in export.NOT_SIMULATED:
        assert name not in scheduler
    # and the simulator takes it as it is
    parsed = sc.parse({'hosts': [{'name': 'h1', 'resources': {'VCPU': 1}}],
                       'config': dict(config, filter_scheduler=scheduler)})
    assert parsed.nova_config['ram_weight_multiplier'] == -2.0
    assert parsed.config['soft_affinity_weight_multiplier'] == 3.0


def test_as_written_where_nova_is_not_installed(nova_conf, tmp_path):
    more = tmp_path / 'nova.conf.d'
    more.mkdir()
    (more / '50-weights.conf').write_text(
        '[filter_scheduler]\nram_weight_multiplier = 5.0\n')
    with mock.patch.object(reader, '_nova_options', return_value=None):
        config = reader.scheduler_config(service_conf(
            [nova_conf, str(more)])).scenario()
    assert config['filter_scheduler'] == {
        'available_filters': ['nova.scheduler.filters.all_filters',
                              'nova_scoped_policies.scheduler.filters.'
                              'all_filters'],
        'enabled_filters': 'ComputeFilter,ScopedAffinityFilter,'
                           'ScopedAntiAffinityFilter',
        'ram_weight_multiplier': '5.0'}
    # the simulator types them with nova's options
    parsed = sc.parse({'hosts': [{'name': 'h1', 'resources': {'VCPU': 1}}],
                       'config': config})
    assert parsed.nova_config['enabled_filters'] == [
        'ComputeFilter', 'ScopedAffinityFilter', 'ScopedAntiAffinityFilter']
    assert parsed.nova_config['ram_weight_multiplier'] == 5.0


def test_a_file_that_cannot_be_read_fails_the_export(tmp_path):
    with pytest.raises(errors.Unavailable) as caught:
        reader.scheduler_config(service_conf([str(tmp_path / 'none.conf')]))
    assert 'scheduler_config_files' in str(caught.value)
    bad = tmp_path / 'bad.conf'
    bad.write_text('[filter_scheduler]\nram_weight_multiplier = much\n')
    with pytest.raises(errors.Unavailable, match='much'):
        reader.scheduler_config(service_conf([str(bad)]))


def test_what_the_export_leaves_out_is_what_the_simulator_holds():
    assert set(export.NOT_SIMULATED) == set(sc._NOT_SIMULATED)
