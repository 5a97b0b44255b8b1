"""The nova adapters: hints, per-request state, in-flight selections,
errors that reach the tenant, and loading by nova's own loaders."""

import logging
import uuid

from oslo_serialization import jsonutils
from oslo_utils.fixture import uuidsentinel as uuids
import pytest

from nova import exception
from nova import objects
from nova.scheduler import filters as nova_filters
from nova.scheduler import weights as nova_weights
from nova.tests.unit.scheduler import fakes
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.conf import opts
from nova_scoped_policies import topology as topo
from nova_scoped_policies.scheduler import members
from nova_scoped_policies.scheduler import sources
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.scheduler import aggregate_cache
from nova_scoped_policies.db import records
from nova_scoped_policies.scheduler import stores
from nova_scoped_policies import policy
from nova_scoped_policies.scheduler.filters.scoped_affinity import \
    ScopedAffinityFilter
from nova_scoped_policies.scheduler.filters.scoped_anti_affinity import \
    ScopedAntiAffinityFilter
from nova_scoped_policies.scheduler.weights.scoped_soft_anti_affinity import \
    ScopedSoftAntiAffinityWeigher
from tests.unit.scheduler.conftest import FakeLocator
from tests.unit.scheduler.conftest import racks
from tests.unit.scheduler.conftest import StaticAggregates

TOPOLOGY = racks(**{'rack-1': ['h1', 'h2'], 'rack-2': ['h3', 'h4'],
                    'rack-3': ['h5', 'h6']})
HOSTS = [fakes.FakeHostState(f'h{i}', f'n{i}', {}) for i in range(1, 7)]


def spec(document=None, policy='anti-affinity', members=(), hosts=None,
         group=True, instance=uuids.new, rules=None):
    hints = {}
    if document is not None:
        hints['scoped_policies'] = [document if isinstance(document, str)
                                    else jsonutils.dumps(document)]
    instance_group = None
    if group:
        instance_group = objects.InstanceGroup(
            uuid=uuids.group, name='g', policy=policy,
            members=list(members), rules=rules or {},
            hosts=list(hosts) if hosts is not None else [])
    return objects.RequestSpec(instance_group=instance_group,
                               scheduler_hints=hints, instance_uuid=instance,
                               project_id='tenant-a')


def names(host_states):
    return [h.host for h in host_states]


def test_no_group_no_hint_passes_everything_untouched(install):
    locator = FakeLocator()
    install(locator, TOPOLOGY)
    spec_obj = spec(group=False)
    assert ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj) is HOSTS
    assert locator.calls == 0


def test_hint_adds_rack_anti_affinity_to_nova_group(install):
    install(FakeLocator({uuids.m1: 'h1'}), TOPOLOGY)
    spec_obj = spec({'policies': ['anti-affinity:rack']},
                    members=[uuids.m1, uuids.new])
    assert names(ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj)) == \
        ['h3', 'h4', 'h5', 'h6']


def test_plain_nova_group_without_hint(install):
    install(FakeLocator({uuids.m1: 'h1', uuids.m2: 'h1'}), TOPOLOGY)
    spec_obj = spec(members=[uuids.m1, uuids.m2],
                    rules={'max_server_per_host': 2})
    assert names(ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj)) == \
        ['h2', 'h3', 'h4', 'h5', 'h6']


def test_plain_nova_group_is_novas_when_novas_filter_is_enabled(install,
                                                                conf):
    """One enforcement per plain policy: with Nova's group filter named in
    nova-scheduler's enabled_filters, ours pass every host (Nova's filter,
    the compute's late check and the conductor's retries decide)."""
    install(FakeLocator({uuids.m1: 'h1', uuids.m2: 'h1'}), TOPOLOGY)
    conf.config(group='filter_scheduler', enabled_filters=[
        'ComputeFilter', 'ServerGroupAntiAffinityFilter',
        'ScopedAffinityFilter', 'ScopedAntiAffinityFilter'])
    spec_obj = spec(members=[uuids.m1, uuids.m2],
                    rules={'max_server_per_host': 2})
    assert names(ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj)) == \
        names(HOSTS)
    # the same group with a scoped policy is ours again, its plain part too
    spec_obj = spec({'policies': ['anti-affinity:rack']},
                    members=[uuids.m1, uuids.m2],
                    rules={'max_server_per_host': 2})
    assert 'h1' not in names(
        ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj))


def test_one_member_lookup_per_request_shared_by_all_plugins(install):
    locator = FakeLocator({uuids.m1: 'h1'})
    states = install(locator, TOPOLOGY)
    spec_obj = spec({'policies': ['anti-affinity:rack',
                                  'soft-anti-affinity:host']},
                    policy='soft-anti-affinity',
                    members=[uuids.m1, uuids.a, uuids.b])
    handler = nova_weights.HostWeightHandler()
    weigher = ScopedSoftAntiAffinityWeigher()
    for index, instance in enumerate((uuids.a, uuids.b)):
        spec_obj.instance_uuid = instance
        for filt in (ScopedAffinityFilter(), ScopedAntiAffinityFilter()):
            list(filt.filter_all(HOSTS, spec_obj))
        handler.get_weighed_objects([weigher], HOSTS, spec_obj)
        # nova appends each selection for the next instance.
        spec_obj.instance_group.hosts.append('h3')
    assert locator.calls == 1
    assert states.sources.aggregates.calls == 1


def test_in_flight_selections_of_a_multi_instance_request(install):
    install(FakeLocator(), TOPOLOGY)
    spec_obj = spec({'policies': ['anti-affinity:rack']},
                    policy='soft-anti-affinity',
                    members=[uuids.a, uuids.b, uuids.c])
    filt = ScopedAntiAffinityFilter()
    assert len(filt.filter_all(HOSTS, spec_obj)) == 6
    spec_obj.instance_group.hosts.append('h2')      # nova chose h2 for a
    spec_obj.instance_uuid = uuids.b
    assert names(filt.filter_all(HOSTS, spec_obj)) == ['h3', 'h4', 'h5',
                                                       'h6']
    spec_obj.instance_group.hosts.append('h5')      # and h5 for b
    spec_obj.instance_uuid = uuids.c
    assert names(filt.filter_all(HOSTS, spec_obj)) == ['h3', 'h4']


def test_group_hosts_known_before_the_request_are_not_in_flight(install):
    # The conductor fills instance_group.hosts with the members' hosts;
    # those members are counted once, from the database.
    install(FakeLocator({uuids.m1: 'h1'}), TOPOLOGY)
    spec_obj = spec({'policies': ['anti-affinity:rack'],
                     'rules': {'max_server_per_rack': 2}},
                    members=[uuids.m1, uuids.new], hosts=['h1'])
    assert names(ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj)) == \
        ['h2', 'h3', 'h4', 'h5', 'h6']


@pytest.mark.parametrize('document, field', [
    ('{not json', "scoped_policies: '{not json': is not valid JSON"),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 0}},
     'scoped_policies.rules.max_server_per_rack: 0'),
    ({'policies': ['bogus']}, "scoped_policies.policies[0]: 'bogus'"),
    ({'policies': ['affinity']},
     'server_group.policy and scoped_policies.policies[0] contradict'),
    ({'rules': {'size': 3}, 'bogus': 1}, 'scoped_policies.bogus'),
    ({'policies': ['affinity:rack:rack-1']},
     'does not allow targeting a domain by identifier'),
])
def test_bad_hint_is_no_valid_host_naming_the_field(install, document,
                                                    field):
    install(FakeLocator(), TOPOLOGY)
    with pytest.raises(exception.NoValidHost) as err:
        ScopedAntiAffinityFilter().filter_all(HOSTS, spec(document))
    assert field in str(err.value)


def test_hint_without_group_needs_one_for_untargeted_policies(install):
    install(FakeLocator(), TOPOLOGY)
    with pytest.raises(exception.NoValidHost, match="'group' scheduler hint"):
        ScopedAntiAffinityFilter().filter_all(
            HOSTS, spec({'policies': ['anti-affinity:rack']}, group=False))


def test_hint_without_group_may_target_a_domain(install):
    zones = topo.from_aggregates([topo.AggregateInfo(
        'uuid-zone-a', 'zone-a', ['h1', 'h2'],
        {'policy_scope': 'zone', 'policy_scope_allow_identifiers': 'true'})])
    install(FakeLocator(), zones)
    spec_obj = spec({'policies': ['affinity:zone:uuid-zone-a']}, group=False)
    assert names(ScopedAffinityFilter().filter_all(HOSTS, spec_obj)) == \
        ['h1', 'h2']


def test_hint_ignored_when_disabled(install, conf, caplog):
    conf.config(allow_policy_hint=False, group='scoped_policies')
    install(FakeLocator({uuids.m1: 'h1'}), TOPOLOGY)
    spec_obj = spec({'policies': ['anti-affinity:rack']},
                    members=[uuids.m1])
    with caplog.at_level(logging.WARNING):
        assert len(ScopedAntiAffinityFilter().filter_all(HOSTS,
                                                         spec_obj)) == 5
    assert 'allow_policy_hint is False' in caplog.text


def test_member_lookup_failure_fails_closed(install):
    class Broken:
        def locate(self, context, uuids):
            raise members.MemberLookupError('cell c1 did not return')
    install(Broken(), TOPOLOGY)
    with pytest.raises(exception.NoValidHost, match='cannot check the group'):
        ScopedAntiAffinityFilter().filter_all(
            HOSTS, spec(members=[uuids.m1]))


def test_placement_outage_fails_closed_only_for_hard_policies(install):
    """Placement did not return the claims of members in flight: a hard
    scoped group fails closed; a soft one is weighed with the members the
    cells placed."""
    class Down:
        def locate(self, context, wanted):
            raise members.MemberLookupError(
                'Placement did not answer',
                {u: ('h1' if u == uuids.m1 else None) for u in wanted})
    install(Down(), TOPOLOGY)
    with pytest.raises(exception.NoValidHost, match='Placement did not'):
        ScopedAntiAffinityFilter().filter_all(
            HOSTS, spec(members=[uuids.m1, uuids.m2]))
    soft = spec({'policies': ['soft-anti-affinity:rack']},
                policy='soft-anti-affinity', members=[uuids.m1, uuids.m2])
    assert len(ScopedAntiAffinityFilter().filter_all(HOSTS, soft)) == 6
    evaluation = state.states().evaluation(soft)
    assert evaluation.context.placed_hosts


def test_all_rejected_logs_reasons_at_info(install, caplog):
    install(FakeLocator({uuids.m1: 'h1', uuids.m2: 'h3', uuids.m3: 'h5'}),
            TOPOLOGY)
    spec_obj = spec({'policies': ['anti-affinity:rack']},
                    members=[uuids.m1, uuids.m2, uuids.m3])
    with caplog.at_level(logging.INFO):
        assert ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj) == []
    assert 'ScopedAntiAffinityFilter rejected all 6 host(s)' in caplog.text
    assert 'anti-affinity:rack: rack-1 holds 1 of max 1' in caplog.text


def test_filters_do_not_run_on_rebuild():
    assert ScopedAffinityFilter.RUN_ON_REBUILD is False
    assert ScopedAntiAffinityFilter.RUN_ON_REBUILD is False


def test_nova_loaders_find_our_classes_by_the_public_paths():
    filters = nova_filters.HostFilterHandler().get_matching_classes(
        ['nova_scoped_policies.scheduler.filters.all_filters'])
    assert [c.__name__ for c in filters] == ['ScopedAffinityFilter',
                                             'ScopedAntiAffinityFilter']
    weighers = nova_weights.HostWeightHandler().get_matching_classes(
        ['nova_scoped_policies.scheduler.weights.all_weighers'])
    assert [c.__name__ for c in weighers] == [
        'ScopedSoftAffinityWeigher', 'ScopedSoftAntiAffinityWeigher']
    ours = {c.__name__ for c in filters + weighers}
    nova = {c.__name__ for c in
            nova_filters.HostFilterHandler().get_all_classes()
            + nova_weights.HostWeightHandler().get_all_classes()}
    assert not ours & nova


def test_list_opts_for_the_config_generator():
    listed = dict((getattr(g, 'name', g), o) for g, o in opts.list_opts())
    assert {'auth_type', 'endpoint_override', 'timeout'} <= {
        o.dest for o in listed['placement']}
    options = listed['scoped_policies']
    assert {o.name for o in options} == {
        'allow_policy_hint', 'soft_affinity_weight_multiplier',
        'soft_anti_affinity_weight_multiplier', 'aggregate_refresh_interval',
        'enable_forbidden_aggregates_filter',
        'enable_scoped_policy_query_filter', 'enable_scoped_plan_filter',
        'max_query_aggregates',
        'store_driver', 'store_cache_ttl', 'coordination_backend_url',
        'coordination_lock_timeout', 'store_retry_interval',
        'placement_retry_interval', 'nova_seam', 'aggregate_notifications'}
    for group in ('scoped_policies', 'scoped_policies_api', 'policy_store',
                  'scoped_policies_notifications'):
        for option in listed[group]:
            assert len(option.help) > 80, option.name
    assert {o.name for o in listed['scoped_policies_api']} == {
        'auth_strategy', 'bind_host', 'bind_port', 'max_group_members',
        'stack_time_limit', 'stack_relative_gap', 'stack_workers',
        'stack_reap_interval', 'stack_sweep_interval', 'connect_timeout',
        'read_timeout',
        'repair_time_limit', 'repair_move_timeout', 'repair_max_parallel',
        'repair_task_keep_days', 'repair_task_stale_seconds',
        'export_obfuscation_key', 'export_workers',
        'scheduler_config_files', 'check_stack_quota',
        'nova_counts_usage_from_placement'}
    assert 'auth_type' in {o.dest for o in listed['policy_api']}
    assert {o.name for o in listed['scoped_policies_notifications']} == {
        'topics', 'retry', 'queue_size'}
    assert set(listed) == {'scoped_policies', 'placement', 'policy_store',
                           'policy_api', 'scoped_policies_api', 'nova',
                           'scoped_policies_notifications'}


def test_register_opts_is_idempotent():
    nsp_conf.register_opts(state.CONF)
    nsp_conf.register_opts(state.CONF)
    assert state.CONF.scoped_policies.aggregate_refresh_interval == 30


def test_aggregate_cache_refreshes_after_interval(monkeypatch, caplog):
    loads = []

    def fake_get_all(context):
        loads.append(context)
        return [objects.Aggregate(uuid=uuids.r1, name='r1', hosts=['h1'],
                                  metadata={'policy_scope': 'rack'}),
                objects.Aggregate(uuid=uuids.r2, name='r2', hosts=['h1'],
                                  metadata={'policy_scope': 'rack'})]
    monkeypatch.setattr(objects.AggregateList, 'get_all', fake_get_all)
    now = [100.0]
    source = aggregate_cache.AggregateCache(lambda: 30,
                                            clock=lambda: now[0])
    with caplog.at_level(logging.WARNING):
        first = source.get('ctx')
        assert source.get('ctx') is first
        now[0] += 30
        second = source.get('ctx')
    assert second is not first
    assert len(loads) == 2
    assert second.domains_of('rack', 'h1') == tuple(sorted([uuids.r1,
                                                            uuids.r2]))
    # the host in two racks is reported once, not at every refresh
    assert caplog.text.count('host h1 is in 2 domains of scope rack') == 1


def test_error_in_a_targeted_hint_names_the_tenants_field(install):
    zones = topo.from_aggregates([topo.AggregateInfo(
        'uuid-zone-a', 'zone-a', ['h1'],
        {'policy_scope': 'zone', 'policy_scope_allow_identifiers': 'true'})])
    install(FakeLocator(), zones)
    with pytest.raises(exception.NoValidHost) as err:
        ScopedAffinityFilter().filter_all(HOSTS, spec(
            {'policies': ['affinity:zone:uuid-zone-b']}))
    # the group's own anti-affinity comes first in the merged document
    assert "scoped_policies.policies[0]: 'uuid-zone-b'" in str(err.value)


def test_nova_member_locator_one_query_per_cell(monkeypatch):
    calls = []

    def scatter(context, fn, filters, expected_attrs):
        calls.append(filters)
        return {'cell1': [objects.Instance(uuid=uuids.m1, host='h1'),
                          objects.Instance(uuid=uuids.m2, host=None)],
                'cell2': [objects.Instance(uuid=uuids.m3, host='h7')]}
    monkeypatch.setattr(members.nova_context, 'scatter_gather_skip_cell0',
                        scatter)
    found = members.NovaMemberLocator().locate(
        'ctx', [uuids.m1, uuids.m2, uuids.m3])
    assert found == {uuids.m1: 'h1', uuids.m2: None, uuids.m3: 'h7'}
    assert calls == [{'uuid': [uuids.m1, uuids.m2, uuids.m3],
                      'deleted': False}]
    assert members.NovaMemberLocator().locate('ctx', []) == {}
    assert len(calls) == 1


def test_nova_member_locator_fails_closed_when_a_cell_is_silent(
        monkeypatch):
    from nova import context as nova_context
    monkeypatch.setattr(
        members.nova_context, 'scatter_gather_skip_cell0',
        lambda *a, **k: {'cell1': [],
                         'cell2': nova_context.did_not_respond_sentinel})
    with pytest.raises(members.MemberLookupError, match='cell cell2'):
        members.NovaMemberLocator().locate('ctx', [uuids.m1])


class _Store:
    """A CachedStore stand-in: uuid -> GroupRecord, or down."""

    def __init__(self, groups=None, down=None):
        self.groups, self.down = groups or {}, down

    def scopes(self):
        return []

    def group(self, uuid):
        if self.down is not None:
            exc = stores.StoreUnavailable('database gone')
            if self.down != 'never read':
                exc.last_known = self.down
            raise exc
        return self.groups.get(uuid)


def _stored(policies, members=()):
    return records.GroupRecord(uuids.group, 'tenant-a', policy.parse_document(
        {'policies': policies}), tuple(members))


def _states(monkeypatch, store, locator=None, topology=TOPOLOGY):
    states = state.RequestStates(locator or FakeLocator(),
                                 StaticAggregates(topology), store=store)
    monkeypatch.setattr(state, 'STATES', states)
    return states


def test_stored_policies_and_members_join_novas_group(monkeypatch):
    # m2 was added through the policy API: nova's group does not list it
    _states(monkeypatch, _Store({uuids.group: _stored(
        ['anti-affinity:rack'], [uuids.m2])}),
        FakeLocator({uuids.m1: 'h1', uuids.m2: 'h3'}))
    spec_obj = spec(members=[uuids.m1, uuids.new])
    assert names(ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj)) == \
        ['h5', 'h6']


def test_stored_real_identifiers_reach_the_engine_in_tenant_form(
        monkeypatch):
    ns = '6f72348f-df5d-4e0f-a043-4be92996dbfe'
    zones = topo.from_aggregates([
        topo.AggregateInfo('zone-a', 'zone-a', ['h1', 'h2'],
                           {'policy_scope': 'zone',
                            'policy_scope_allow_identifiers': 'true',
                            'policy_scope_obfuscate_identifiers': 'true',
                            'policy_scope_namespace': ns})])
    _states(monkeypatch, _Store({uuids.group: _stored(
        ['affinity:zone:zone-a'])}), topology=zones)
    spec_obj = spec(policy='soft-affinity', members=[uuids.new])
    assert names(ScopedAffinityFilter().filter_all(HOSTS, spec_obj)) == \
        ['h1', 'h2']


@pytest.mark.parametrize('hint, problem', [
    ('anti-affinity:zone:{mine}', 'ask for affinity and anti-affinity'),
    ('affinity:zone:{other}', 'target two different domains'),
])
def test_merge_errors_name_stored_policies_in_the_tenants_form(
        monkeypatch, hint, problem):
    # stored policies hold real ids; the tenant sees obfuscated ones, and
    # an error merging them with its hint must not show the real ones
    ns = '6f72348f-df5d-4e0f-a043-4be92996dbfe'
    settings = {'policy_scope': 'zone',
                'policy_scope_allow_identifiers': 'true',
                'policy_scope_obfuscate_identifiers': 'true',
                'policy_scope_namespace': ns}
    zones = topo.from_aggregates([
        topo.AggregateInfo('real-zone-a', 'zone-a', ['h1', 'h2'], settings),
        topo.AggregateInfo('real-zone-b', 'zone-b', ['h3'], settings)])
    mine = topo.obfuscate(uuid.UUID(ns), 'tenant-a', 'real-zone-a')
    other = topo.obfuscate(uuid.UUID(ns), 'tenant-a', 'real-zone-b')
    _states(monkeypatch, _Store({uuids.group: _stored(
        ['affinity:zone:real-zone-a'])}), topology=zones)
    spec_obj = spec({'policies': [hint.format(mine=mine, other=other)]},
                    policy='soft-affinity', members=[uuids.new])
    with pytest.raises(exception.NoValidHost) as err:
        ScopedAffinityFilter().filter_all(HOSTS, spec_obj)
    message = str(err.value)
    assert problem in message and mine in message
    assert 'real-zone' not in message


@pytest.mark.parametrize('down, passes', [
    (_stored(['anti-affinity:rack']), False),    # hard: fail closed
    ('never read', False),                       # unknown: fail closed
    (_stored(['soft-anti-affinity:rack']), True),  # soft: skipped
    (None, True),                                # had none
])
def test_unreachable_store(monkeypatch, caplog, down, passes):
    _states(monkeypatch, _Store(down=down))
    spec_obj = spec(policy='soft-affinity', members=[uuids.new])
    if passes:
        assert ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj)
    else:
        with pytest.raises(exception.NoValidHost, match='fail closed'):
            ScopedAntiAffinityFilter().filter_all(HOSTS, spec_obj)


def test_a_bad_store_driver_fails_group_boots_only(monkeypatch, conf):
    conf.config(store_driver='nope', group='scoped_policies')
    states = _states(monkeypatch, state._FROM_CONF)
    assert states.sources.stored_scopes() == []
    assert ScopedAntiAffinityFilter().filter_all(
        HOSTS, spec(group=False)) is HOSTS
    with pytest.raises(exception.NoValidHost, match="store_driver: 'nope'"):
        ScopedAntiAffinityFilter().filter_all(HOSTS, spec())


class _TraitLocator(members.StaticMemberLocator):
    """Licence traits from a mapping, or a Placement that does not
    answer; counts the questions."""

    def __init__(self, traits, failing=False):
        super().__init__(traits=traits)
        self.failing = failing
        self.asked = 0

    def hosts_with_trait(self, context, trait):
        self.asked += 1
        if self.failing:
            raise members.MemberLookupError('Placement is down')
        return super().hosts_with_trait(context, trait)


SAP = {'CUSTOM_LICENSE_SAP'}


def test_the_licence_plugins_name_the_traits_they_read():
    document = policy.parse_document({'policies': [
        'license:sap', 'soft-license-pack:db2', 'anti-affinity:rack']})
    assert registry.placement_traits([document]) == {
        'CUSTOM_LICENSE_SAP', 'CUSTOM_LICENSE_DB2'}


def test_licence_traits_are_read_once_per_refresh_interval(conf):
    conf.config(aggregate_refresh_interval=30, group='scoped_policies')
    locator = _TraitLocator({'h5': ['CUSTOM_LICENSE_SAP']})
    source = sources.Sources(locator, StaticAggregates(TOPOLOGY),
                             store=None)
    for _ in range(2):
        licensed = source.with_traits(None, TOPOLOGY, SAP)
        assert licensed.licensed('SAP') == {'h5'}
    assert locator.asked == 1
    assert source.with_traits(None, TOPOLOGY, set()) is TOPOLOGY


def test_licence_traits_fail_closed_when_placement_is_down(conf, caplog):
    conf.config(aggregate_refresh_interval=0, group='scoped_policies')
    locator = _TraitLocator({'h5': ['CUSTOM_LICENSE_SAP']}, failing=True)
    source = sources.Sources(locator, StaticAggregates(TOPOLOGY),
                             store=None)
    with caplog.at_level(logging.WARNING):
        assert source.with_traits(None, TOPOLOGY, SAP).licensed(
            'SAP') == frozenset()
    assert 'CUSTOM_LICENSE_SAP could not be read' in caplog.text
    locator.failing = False
    assert source.with_traits(None, TOPOLOGY, SAP).licensed(
        'SAP') == {'h5'}
    # then down again: the hosts read before stand
    locator.failing = True
    assert source.with_traits(None, TOPOLOGY, SAP).licensed(
        'SAP') == {'h5'}
