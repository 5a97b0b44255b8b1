"""nova's own unit cases for its group filters and soft weighers,
rewritten against ours in host scope (nova 34.0.0,
nova/tests/unit/scheduler/filters/test_affinity_filters.py and
nova/tests/unit/scheduler/weights/test_weights_affinity.py).

Nova's filters read members from ``HostState.instances`` and the group's
``hosts``; ours locate members in the database once per request. The
locator here is built from the same HostStates, so both see one world.
"""

from unittest import mock

from oslo_utils.fixture import uuidsentinel as uuids
import pytest

from nova import objects
from nova.scheduler import weights
from nova.tests.unit.scheduler import fakes
from nova_scoped_policies.scheduler.filters.scoped_affinity import \
    ScopedAffinityFilter
from nova_scoped_policies.scheduler.filters.scoped_anti_affinity import \
    ScopedAntiAffinityFilter
from nova_scoped_policies.scheduler.weights.scoped_soft_affinity import \
    ScopedSoftAffinityWeigher
from nova_scoped_policies.scheduler.weights.scoped_soft_anti_affinity import \
    ScopedSoftAntiAffinityWeigher
from tests.unit.scheduler.conftest import FakeLocator


def passes(install, filt, host, spec_obj, others=()):
    install(FakeLocator.from_host_states([host, *others]))
    return filt.host_passes(host, spec_obj)


# -- ServerGroupAntiAffinityFilter -----------------------------------------

def test_group_anti_affinity_filter_passes(install):
    filt = ScopedAntiAffinityFilter()
    host = fakes.FakeHostState('host1', 'node1', {})
    assert passes(install, filt, host,
                  objects.RequestSpec(instance_group=None))
    assert passes(install, filt, host, objects.RequestSpec(
        instance_group=objects.InstanceGroup(policy='affinity')))
    spec_obj = objects.RequestSpec(instance_group=objects.InstanceGroup(
        policy='anti-affinity', members=[]), instance_uuid=uuids.fake)
    spec_obj.instance_group.hosts = []
    assert passes(install, filt, host, spec_obj)
    spec_obj = objects.RequestSpec(instance_group=objects.InstanceGroup(
        policy='anti-affinity', members=[]), instance_uuid=uuids.fake)
    spec_obj.instance_group.hosts = ['host2']
    assert passes(install, filt, host, spec_obj)


def test_group_anti_affinity_filter_fails(install):
    inst1 = objects.Instance(uuid=uuids.inst1)
    host = fakes.FakeHostState('host1', 'node1', {}, instances=[inst1])
    spec_obj = objects.RequestSpec(
        instance_group=objects.InstanceGroup(policy='anti-affinity',
                                             hosts=['host1'],
                                             members=[uuids.inst1],
                                             rules={}),
        instance_uuid=uuids.fake)
    assert not passes(install, ScopedAntiAffinityFilter(), host, spec_obj)


def _anti_affinity_with_rules(install, rules, members):
    inst1 = objects.Instance(uuid=uuids.inst1)
    inst2 = objects.Instance(uuid=uuids.inst2)
    spec_obj = objects.RequestSpec(
        instance_group=objects.InstanceGroup(policy='anti-affinity',
                                             hosts=['host1'],
                                             members=members,
                                             rules=rules),
        instance_uuid=uuids.fake)
    # 2 instances on same host
    host = fakes.FakeHostState('host1', 'node1', {},
                               instances=[inst1, inst2])
    return passes(install, ScopedAntiAffinityFilter(), host, spec_obj)


@pytest.mark.parametrize('rules, members, expected', [
    # the members of this group on the host already reach the max.
    ({'max_server_per_host': 1}, [uuids.inst1], False),
    ({'max_server_per_host': 2}, [uuids.inst1, uuids.inst2], False),
    ({'max_server_per_host': 1}, [], True),
    # we can have at most 2 members from the same group on the same host.
    ({'max_server_per_host': 2}, [uuids.inst1], True),
])
def test_group_anti_affinity_filter_with_rules(install, rules, members,
                                               expected):
    assert _anti_affinity_with_rules(install, rules, members) is expected


def test_group_anti_affinity_filter_allows_instance_to_same_host(install):
    instance = objects.Instance(uuid=uuids.fake)
    host_state = fakes.FakeHostState('host1', 'node1', {},
                                     instances=[instance])
    spec_obj = objects.RequestSpec(instance_group=objects.InstanceGroup(
        policy='anti-affinity', hosts=['host1', 'host2'], members=[]),
        instance_uuid=instance.uuid)
    assert passes(install, ScopedAntiAffinityFilter(), host_state, spec_obj)


def test_group_anti_affinity_allows_moving_member_to_stay(install):
    # Beyond nova's case above: the moving instance is itself a member, and
    # another member shares its host (max 2). Nova passes its own host.
    me = objects.Instance(uuid=uuids.fake)
    other = objects.Instance(uuid=uuids.other)
    host_state = fakes.FakeHostState('host1', 'node1', {},
                                     instances=[me, other])
    spec_obj = objects.RequestSpec(instance_group=objects.InstanceGroup(
        policy='anti-affinity', hosts=['host1'],
        members=[uuids.fake, uuids.other]), instance_uuid=uuids.fake)
    assert passes(install, ScopedAntiAffinityFilter(), host_state, spec_obj)


# -- ServerGroupAffinityFilter ---------------------------------------------

def test_group_affinity_filter_passes(install):
    filt = ScopedAffinityFilter()
    host = fakes.FakeHostState('host1', 'node1', {})
    assert passes(install, filt, host,
                  objects.RequestSpec(instance_group=None))
    assert passes(install, filt, host, objects.RequestSpec(
        instance_group=objects.InstanceGroup(policies=['anti-affinity'])))
    # nova's case gives only group hosts; ours needs the member behind them.
    spec_obj = objects.RequestSpec(instance_group=objects.InstanceGroup(
        policies=['affinity'], hosts=['host1'], members=[uuids.inst1]))
    assert passes(install, filt, host, spec_obj, others=[
        fakes.FakeHostState('host1', 'node1', {}, instances=[
            objects.Instance(uuid=uuids.inst1)])])


def test_group_affinity_filter_fails(install):
    host = fakes.FakeHostState('host1', 'node1', {})
    host2 = fakes.FakeHostState('host2', 'node2', {}, instances=[
        objects.Instance(uuid=uuids.inst1)])
    spec_obj = objects.RequestSpec(instance_group=objects.InstanceGroup(
        policies=['affinity'], hosts=['host2'], members=[uuids.inst1]))
    assert not passes(install, ScopedAffinityFilter(), host, spec_obj,
                      others=[host2])


# -- ServerGroupSoftAffinityWeigher / SoftAntiAffinityWeigher --------------

MEMBERS = ['member1', 'member2', 'member3', 'member4', 'member5',
           'member6', 'member7']


def _all_hosts():
    host_values = [
        ('host1', 'node1', {'instances': {
            'member1': mock.sentinel, 'instance13': mock.sentinel}}),
        ('host2', 'node2', {'instances': {
            'member2': mock.sentinel, 'member3': mock.sentinel,
            'member4': mock.sentinel, 'member5': mock.sentinel,
            'othermember1': mock.sentinel, 'othermember2': mock.sentinel,
            'instance14': mock.sentinel}}),
        ('host3', 'node3', {'instances': {'instance15': mock.sentinel}}),
        ('host4', 'node4', {'instances': {
            'member6': mock.sentinel, 'member7': mock.sentinel,
            'instance16': mock.sentinel}})]
    return [fakes.FakeHostState(host, node, values)
            for host, node, values in host_values]


def _weighed(install, weigher, policy, group='default', hosts=None):
    hosts = hosts or _all_hosts()
    install(FakeLocator.from_host_states(hosts))
    members = MEMBERS if group == 'default' else ['othermember1',
                                                  'othermember2']
    spec = objects.RequestSpec(instance_group=objects.InstanceGroup(
        policy=policy, members=members))
    return weights.HostWeightHandler().get_weighed_objects(
        [weigher], hosts, spec)[0]


AGG = 'scoped_soft_{}_weight_multiplier'


@pytest.mark.parametrize('weigher, policy, option, host', [
    (ScopedSoftAffinityWeigher, 'soft-affinity',
     'soft_affinity_weight_multiplier', 'host2'),
    (ScopedSoftAntiAffinityWeigher, 'soft-anti-affinity',
     'soft_anti_affinity_weight_multiplier', 'host3'),
])
@pytest.mark.parametrize('multiplier, expected_weight', [
    (None, 1.0),   # by default
    (0.0, 0.0),    # we do not know the host, all have the same weight
    (2.0, 2.0),
])
def test_soft_weigher_multiplier(install, conf, weigher, policy, option,
                                 host, multiplier, expected_weight):
    if multiplier is not None:
        conf.config(**{option: multiplier}, group='scoped_policies')
    weighed = _weighed(install, weigher(), policy)
    assert weighed.weight == expected_weight
    if expected_weight:
        assert weighed.obj.host == host


@pytest.mark.parametrize('weigher, key', [
    (ScopedSoftAffinityWeigher, AGG.format('affinity')),
    (ScopedSoftAntiAffinityWeigher, AGG.format('anti_affinity')),
])
def test_soft_weigher_multiplier_from_aggregates(conf, weigher, key):
    conf.config(**{weigher.option: 0.0}, group='scoped_policies')
    host1 = fakes.FakeHostState('fake-host', 'node',
                                {'instances': {'instance1': mock.sentinel}})
    w = weigher()
    # By default, return the weight_multiplier configuration directly
    assert w.weight_multiplier(host1) == 0.0
    host1.aggregates = [objects.Aggregate(
        id=1, name='foo', hosts=['fake-host'], metadata={key: '2'})]
    # read the weight multiplier from metadata to override the config
    assert w.weight_multiplier(host1) == 2.0
    host1.aggregates.append(objects.Aggregate(
        id=2, name='foo', hosts=['fake-host'], metadata={key: '1.5'}))
    # conflicting values in several aggregates: the smallest wins
    assert w.weight_multiplier(host1) == 1.5
    # nova's own key does not touch our weighers
    host1.aggregates = [objects.Aggregate(
        id=1, name='foo', hosts=['fake-host'],
        metadata={weigher.option: '5'})]
    assert w.weight_multiplier(host1) == 0.0


@pytest.mark.parametrize('weigher, policy, host', [
    (ScopedSoftAffinityWeigher, 'soft-affinity', 'host2'),
    (ScopedSoftAntiAffinityWeigher, 'soft-anti-affinity', 'host3'),
])
def test_soft_weigher_host_with_agg(install, conf, weigher, policy, host):
    conf.config(**{weigher.option: 0.0}, group='scoped_policies')
    hosts = _all_hosts()
    aggs = [objects.Aggregate(id=1, name='foo', hosts=['fake-host'],
                              metadata={w_key(weigher): '1.5'})]
    for h in hosts:
        h.aggregates = aggs
    weighed = _weighed(install, weigher(), policy, hosts=hosts)
    assert weighed.weight == 1.5
    assert weighed.obj.host == host


def w_key(weigher):
    return weigher().metadata_key


@pytest.mark.parametrize('weigher, policy, host, other_host', [
    (ScopedSoftAffinityWeigher, 'soft-affinity', 'host2', 'host2'),
    (ScopedSoftAntiAffinityWeigher, 'soft-anti-affinity', 'host3', 'host1'),
])
def test_soft_weigher_running_twice(install, weigher, policy, host,
                                    other_host):
    """Two runs for different groups: each run weighs its own members."""
    weighed = _weighed(install, weigher(), policy)
    assert (weighed.weight, weighed.obj.host) == (1.0, host)
    weighed = _weighed(install, weigher(), policy, group='other')
    assert weighed.weight == 1.0
    if policy == 'soft-affinity':
        assert weighed.obj.host == other_host
    else:
        assert weighed.obj.host != 'host2'


@pytest.mark.parametrize('weigher, policy, other', [
    (ScopedSoftAffinityWeigher, 'soft-affinity', 'soft-anti-affinity'),
    (ScopedSoftAntiAffinityWeigher, 'soft-anti-affinity', 'soft-affinity'),
])
def test_multiplier_skips_aggregate_scan_only_when_weights_are_flat(
        install, conf, weigher, policy, other):
    hosts = _all_hosts()
    for h in hosts:
        h.aggregates = [objects.Aggregate(
            id=1, name='foo', hosts=[h.host],
            metadata={w_key(weigher): '3.5'})]
    install(FakeLocator.from_host_states(hosts))
    w = weigher()
    weighed = [weights.WeighedHost(h, 0.0) for h in hosts]
    # a group without this weigher's policy: every weight is 0
    spec = objects.RequestSpec(instance_group=objects.InstanceGroup(
        policy=other, members=MEMBERS))
    assert w.weigh_objects(weighed, spec) == [0.0] * 4
    assert w.weight_multiplier(hosts[0]) == 1.0
    # with its policy the aggregate override applies, as in nova
    spec = objects.RequestSpec(instance_group=objects.InstanceGroup(
        policy=policy, members=MEMBERS))
    assert any(w.weigh_objects(weighed, spec))
    assert w.weight_multiplier(hosts[0]) == 3.5
