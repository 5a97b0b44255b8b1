"""nova-scoped-policies-status upgrade check, table-driven."""

import pathlib
import re

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck
import pytest

import nova.conf
from nova_scoped_policies.cmd import status
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.db import records
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies import policy
from nova_scoped_policies.scheduler import stores
from nova_scoped_policies import topology as topo

Code = upgradecheck.Code
NOVA = 'nova.scheduler.filters.all_filters'
OURS = 'nova_scoped_policies.scheduler.filters.all_filters'
WEIGHERS = ('nova.scheduler.weights.all_weighers,'
            'nova_scoped_policies.scheduler.weights.all_weighers')
GOOD = {'available_filters': [NOVA, OURS],
        'enabled_filters': ('ComputeFilter,ServerGroupAffinityFilter,'
                            'ServerGroupAntiAffinityFilter,'
                            'ScopedAffinityFilter,ScopedAntiAffinityFilter'),
        'weight_classes': WEIGHERS}


def make_conf(tmp_path, filter_scheduler, scoped=None, scheduler=None):
    lines = ['[filter_scheduler]']
    for key, value in filter_scheduler.items():
        for item in (value if isinstance(value, list) else [value]):
            lines.append(f'{key} = {item}')
    for group, values in (('scoped_policies', scoped or {}),
                          ('scheduler', scheduler or {})):
        lines.append(f'[{group}]')
        lines += [f'{k} = {v}' for k, v in values.items()]
    path = tmp_path / 'nova.conf'
    path.write_text('\n'.join(lines) + '\n')
    conf = cfg.ConfigOpts()
    nova.conf.scheduler.register_opts(conf)
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[str(path)])
    return conf


class _Placement:
    def __init__(self, outcome):
        self.outcome = outcome

    def check_version(self):
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


EXPIRY = {'name': 'nova-scoped-policies-aggregates',
          'pattern': '^nova-scoped-policies-aggregates\\.',
          'apply-to': 'queues', 'definition': '{"expires":600000}',
          'priority': 0}


def checks(conf, aggregates=(), placement='1.39', policies=(EXPIRY,)):
    def read():
        if isinstance(policies, Exception):
            raise policies
        return 'the test', list(policies)
    return status.Checks(conf, aggregates=lambda: list(aggregates),
                         placement=lambda: _Placement(placement),
                         policies=read)


def without(key, value):
    return dict(GOOD, **{key: value})


@pytest.mark.parametrize('filter_scheduler, scoped, scheduler, code, text', [
    (GOOD, {}, {}, Code.SUCCESS, 'enabled consistently'),
    ({}, {}, {}, Code.WARNING, 'installed but not enabled'),
    (without('available_filters', [NOVA]), {}, {}, Code.FAILURE,
     'available_filters lacks ' + OURS),
    ({}, {'enable_scoped_policy_query_filter': 'true'}, {}, Code.FAILURE,
     'no filter or weigher of ours is enabled'),
    (without('enabled_filters', 'ComputeFilter'), {}, {}, Code.FAILURE,
     'names neither ScopedAffinityFilter nor ScopedAntiAffinityFilter'),
    (without('enabled_filters', 'ServerGroupAffinityFilter,'
             'ServerGroupAntiAffinityFilter,ScopedAntiAffinityFilter'),
     {}, {}, Code.WARNING, 'lacks ScopedAffinityFilter'),
    (without('weight_classes', 'nova.scheduler.weights.all_weighers'),
     {}, {}, Code.WARNING, 'soft scoped policies are not weighed'),
    (without('enabled_filters', 'ScopedAffinityFilter,'
             'ScopedAntiAffinityFilter'), {}, {}, Code.WARNING,
     'nova-conductor refuses boots into groups'),
    (GOOD, {'enable_forbidden_aggregates_filter': 'true'},
     {'enable_isolated_aggregate_filtering': 'true'}, Code.WARNING,
     'do the same work'),
])
def test_scheduler_configuration(tmp_path, filter_scheduler, scoped,
                                 scheduler, code, text):
    result = checks(make_conf(tmp_path, filter_scheduler, scoped,
                              scheduler))._check_scheduler()
    assert result.code == code
    assert text in result.details


@pytest.mark.parametrize('scoped, placement, code, text', [
    ({}, pc.PlacementError(0, 'GET', '/', 'unreachable'), Code.SUCCESS,
     'any Placement will do'),
    ({'enable_scoped_policy_query_filter': 'true'}, '1.39', Code.SUCCESS,
     'up to 1.39'),
    ({'enable_forbidden_aggregates_filter': 'true'},
     pc.PlacementVersionError(406, 'GET', '/', 'supports microversions up '
                              'to 1.29; needs 1.32'), Code.FAILURE,
     'upgrade Placement'),
    ({'enable_scoped_policy_query_filter': 'true'},
     pc.PlacementError(0, 'GET', '/', 'connection refused'), Code.FAILURE,
     'cannot reach Placement'),
])
def test_placement_microversion(tmp_path, scoped, placement, code, text):
    result = checks(make_conf(tmp_path, GOOD, scoped),
                    placement=placement)._check_placement()
    assert result.code == code
    assert text in result.details


def agg(name, hosts, **metadata):
    return topo.AggregateInfo(f'uuid-{name}', name, hosts, metadata)


@pytest.mark.parametrize('aggregates, code, text', [
    ([], Code.SUCCESS, '0 scope(s) defined'),
    ([agg('r1', ['h1'], policy_scope='rack'),
      agg('r2', ['h2'], policy_scope='rack')], Code.SUCCESS,
     '1 scope(s) defined: rack'),
    ([agg('r1', ['h1'], policy_scope='rack'),
      agg('r2', ['h1'], policy_scope='rack')], Code.FAILURE,
     'host h1 is in 2 domains of scope rack (r1, r2)'),
    ([agg('z1', ['h1'], policy_scope='zone',
          policy_scope_allow_identifiers='true',
          policy_scope_obfuscate_identifiers='true')], Code.FAILURE,
     "set policy_scope_namespace=<uuid> on the scope's aggregates"),
    ([agg('x', ['h1'], policy_scope='bad scope')], Code.WARNING,
     'a scope name is'),
    ([agg('win', ['h1'], **{'trait:CUSTOM_x': 'required'})], Code.WARNING,
     'neither a standard trait'),
])
def test_scope_aggregates(tmp_path, aggregates, code, text):
    result = checks(make_conf(tmp_path, GOOD),
                    aggregates=aggregates)._check_aggregates()
    assert result.code == code
    assert text in result.details


class _Store:
    def __init__(self, scopes=(), groups=(), down=False):
        self._scopes, self._groups, self.down = list(scopes), groups, down

    def scopes(self):
        if self.down:
            raise stores.StoreUnavailable('policy API: connection refused')
        return self._scopes

    def groups(self):
        return [records.GroupRecord(uuid, 'p', policy.parse_document(
            {'policies': policies}), ()) for uuid, policies in self._groups]


def _scope(name, *aggregates):
    return records.ScopeRecord(
        name, allow_identifiers=False, obfuscate_identifiers=False,
        obfuscate_namespace_uuid='6f72348f-df5d-4e0f-a043-4be92996dbfe',
        aggregates=aggregates)


def _raise(exc):
    raise exc


@pytest.mark.parametrize('store, aggregates, code, text', [
    (lambda: None, [], Code.SUCCESS, 'no policy store'),
    (lambda: _Store([_scope('zone')], [('g1', ['anti-affinity:zone',
                                               'anti-affinity'])]),
     [], Code.SUCCESS, '1 stored group(s), every scope they use exists'),
    # a metadata scope counts as defined
    (lambda: _Store([], [('g1', ['anti-affinity:rack'])]),
     [agg('r1', ['h1'], policy_scope='rack')], Code.SUCCESS, 'exists'),
    (lambda: _Store([_scope('zone')], [('g1', ['affinity:zone']),
                                       ('g2', ['anti-affinity:switch'])]),
     [], Code.FAILURE, 'server group g2 (project p) uses undefined '
     'scope(s) switch: create them'),
    (lambda: _Store(down=True), [], Code.FAILURE,
     'connection refused; boots into groups with hard stored policies'),
    (lambda: _raise(ValueError("store_driver: 'nope'")), [], Code.FAILURE,
     "store_driver: 'nope'; use sql or http"),
])
def test_policy_store(tmp_path, store, aggregates, code, text):
    result = status.Checks(make_conf(tmp_path, GOOD),
                           aggregates=lambda: list(aggregates),
                           store=store)._check_store()
    assert result.code == code
    assert text in result.details


def test_stored_scopes_join_the_aggregate_check(tmp_path):
    store = _Store([_scope('zone', 'uuid-a1', 'uuid-a2', 'gone')])
    aggregates = [agg('a1', ['h1', 'h2']), agg('a2', ['h2'])]
    result = status.Checks(make_conf(tmp_path, GOOD),
                           aggregates=lambda: aggregates,
                           store=lambda: store)._check_aggregates()
    assert result.code == Code.FAILURE
    assert 'host h2 is in 2 domains of scope zone' in result.details
    assert ('scope zone: aggregate gone does not exist: remove it from the '
            'scope') in result.details


def readme_conf(tmp_path):
    """The nova.conf snippet of README.md, as an operator copies it."""
    readme = (pathlib.Path(__file__).parents[2] / 'README.md').read_text()
    block = re.search(r'```ini\n(.*?)```', readme, re.S).group(1)
    assert '[filter_scheduler]' in block
    path = tmp_path / 'nova.conf'
    path.write_text(block)
    conf = cfg.ConfigOpts()
    nova.conf.scheduler.register_opts(conf)
    nova.conf.notifications.register_opts(conf)
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[str(path)])
    return conf


def test_readme_configuration_passes_every_check(tmp_path):
    conf = readme_conf(tmp_path)
    rack = topo.AggregateInfo('a1', 'rack-1', ['h1'],
                              {'policy_scope': 'rack'})
    found = checks(conf, [rack]).check()
    assert found == 0, (checks(conf, [rack])._check_scheduler().details,
                        checks(conf, [rack])._check_nova_seam().details)


def test_nova_seam_reports_what_nova_scheduler_installs(tmp_path):
    conf = readme_conf(tmp_path)
    result = checks(conf)._check_nova_seam()
    assert result.code == Code.SUCCESS, result.details
    installed = result.details.split('installs at start: ')[1]
    assert sorted(installed.split('; ')[0].split(': ')[1].split(', ')) == [
        'ForbiddenAggregatesFilter', 'ScopedPlanFilter',
        'ScopedPolicyQueryFilter']
    assert 'select_destinations' in result.details
    assert 'aggregate notifications: nova-scoped-policies-aggregates.' \
        in result.details


def test_nova_seam_without_versioned_notifications_warns(tmp_path):
    result = checks(make_conf(tmp_path, GOOD))._check_nova_seam()
    assert result.code == Code.WARNING
    assert 'notification_format is \'unversioned\'' in result.details
    assert 'aggregate_refresh_interval' in result.details


def test_nova_seam_off_warns_that_hard_policies_fail_closed(tmp_path):
    result = checks(make_conf(tmp_path, GOOD, {'nova_seam': 'false'})
                    )._check_nova_seam()
    assert result.code == Code.WARNING
    assert 'nova_seam is false' in result.details
    assert 'fail closed' in result.details


def test_an_unknown_nova_fails_the_check_saying_why(tmp_path, monkeypatch):
    from nova.scheduler import manager

    def select_destinations(self, context, spec_obj, instance_uuids):
        pass

    monkeypatch.setattr(manager.SchedulerManager, 'select_destinations',
                        select_destinations)
    result = checks(make_conf(tmp_path, GOOD))._check_nova_seam()
    assert result.code == Code.FAILURE
    assert ("SchedulerManager.select_destinations takes ('self', 'context', "
            "'spec_obj', 'instance_uuids')") in result.details
    assert 'fail closed' in result.details


def test_nova_seam_says_which_isolation_mode_runs(tmp_path):
    listened = checks(readme_conf(tmp_path))._check_nova_seam()
    assert 'isolation mode notifications: the forbidden-aggregates filter ' \
        'reads the cached aggregates' in listened.details
    per_request = checks(make_conf(tmp_path, GOOD, {
        'enable_forbidden_aggregates_filter': 'true'}))._check_nova_seam()
    assert 'isolation mode per-request: the forbidden-aggregates filter ' \
        'reads the aggregates\' trait: metadata from the API database ' \
        'for every request' in per_request.details


OTHER = {'name': 'ha', 'pattern': '.*', 'apply-to': 'all',
         'definition': {'ha-mode': 'all'}, 'priority': 1}


@pytest.mark.parametrize('policies, code, text', [
    ([EXPIRY], Code.SUCCESS, 'expires the queue of a scheduler that dies '
     'after 600 s unused (read from the test)'),
    ([], Code.WARNING, 'no RabbitMQ policy of virtual host / matches our '
     'queues'),
    ([EXPIRY, OTHER], Code.WARNING, 'RabbitMQ policy ha applies to our '
     'queues'),
    ([dict(EXPIRY, priority=2), OTHER], Code.SUCCESS, 'after 600 s'),
    (status.PoliciesUnavailable('the management API at x: refused'),
     Code.WARNING, 'cannot read RabbitMQ\'s policies of virtual host / '
     '(tried the management API at x: refused)'),
])
def test_queue_expiry(tmp_path, policies, code, text):
    result = checks(readme_conf(tmp_path),
                    policies=policies)._check_queue_expiry()
    assert result.code == code, result.details
    assert text in result.details
    if code == Code.WARNING and 'ha applies' not in text:
        assert 'rabbitmqctl set_policy -p / nova-scoped-policies-' \
            'aggregates \'^nova-scoped-policies-aggregates\\.\' ' \
            '\'{"expires":600000}\' --apply-to queues' in result.details


def test_no_listener_no_queue_to_expire(tmp_path):
    def unread():
        raise AssertionError('RabbitMQ asked without a listener')
    result = status.Checks(make_conf(tmp_path, GOOD),
                           policies=unread)._check_queue_expiry()
    assert result.code == Code.SUCCESS
    assert 'no aggregate listener' in result.details
