"""Installing our request filters into nova's pipeline (the nova seam),
and running them."""

from oslo_utils.fixture import uuidsentinel as uuids
import pytest

from nova import objects
from nova.scheduler import request_filter
from nova_scoped_policies import topology as topo
from nova.scheduler import manager as sched_manager
from nova_scoped_policies.nova_seam import request_filters as seam_filters
from nova_scoped_policies.scheduler.filters import all_filters
from nova_scoped_policies.scheduler.request_filters import base
from nova_scoped_policies.scheduler.weights import all_weighers
from nova_scoped_policies.scheduler.request_filters.forbidden_aggregates \
    import ForbiddenAggregatesFilter
from nova_scoped_policies.scheduler.request_filters.scoped_policy_query \
    import ScopedPolicyQueryFilter
from tests.unit.scheduler.conftest import FakeLocator
from tests.unit.scheduler.conftest import racks
from tests.unit.scheduler.conftest import StaticAggregates

FA = 'enable_forbidden_aggregates_filter'
SQ = 'enable_scoped_policy_query_filter'
SP = 'enable_scoped_plan_filter'


@pytest.fixture
def pipeline(monkeypatch):
    # nova's own filters (other tests may have left ours installed)
    original = [f for f in request_filter.ALL_REQUEST_FILTERS
                if not type(f).__module__.startswith('nova_scoped_policies')]
    monkeypatch.setattr(request_filter, 'ALL_REQUEST_FILTERS',
                        list(original))
    return original


def ours():
    return [type(f).__name__ for f in request_filter.ALL_REQUEST_FILTERS
            if type(f).__module__.startswith('nova_scoped_policies')]


@pytest.mark.parametrize('options, expected', [
    ({SP: False}, []),
    ({}, ['ScopedPlanFilter']),     # on by default, inert without hints
    ({FA: True, SP: False}, ['ForbiddenAggregatesFilter']),
    ({SQ: True, SP: False}, ['ScopedPolicyQueryFilter']),
    ({FA: True, SQ: True, SP: False}, ['ForbiddenAggregatesFilter',
                                       'ScopedPolicyQueryFilter']),
])
def test_sync_installs_enabled_filters_once(conf, pipeline, options,
                                            expected):
    conf.config(group='scoped_policies', **options)
    for _ in range(3):
        assert seam_filters.sync() == expected
    assert ours() == expected
    # nova's own filters are untouched and stay first.
    assert request_filter.ALL_REQUEST_FILTERS[:len(pipeline)] == pipeline


def test_listing_our_filters_and_weighers_changes_nothing_in_nova(
        conf, pipeline):
    """nova lists ``available_filters`` and ``weight_classes`` (and so
    may any tool reading nova.conf): that touches nothing of nova's."""
    conf.config(group='scoped_policies', **{SQ: True, FA: True})
    manager = dict(sched_manager.SchedulerManager.__dict__)
    assert all_filters() and all_weighers()
    all_filters()
    assert ours() == []
    assert request_filter.ALL_REQUEST_FILTERS == pipeline
    assert dict(sched_manager.SchedulerManager.__dict__) == manager


def test_disabling_removes_only_ours(conf, pipeline):
    conf.config(group='scoped_policies', **{FA: True, SQ: True, SP: False})
    seam_filters.sync()
    conf.config(group='scoped_policies', **{FA: False})
    seam_filters.sync()
    assert ours() == ['ScopedPolicyQueryFilter']
    conf.config(group='scoped_policies', **{SQ: False})
    seam_filters.sync()
    assert request_filter.ALL_REQUEST_FILTERS == pipeline


def test_disabled_filter_called_anyway_does_nothing(install):
    install(FakeLocator(), racks(**{'rack-1': ['h1']}))
    spec = objects.RequestSpec(instance_group=None)
    assert ScopedPolicyQueryFilter()(None, spec) is False
    assert ForbiddenAggregatesFilter()(None, spec) is False
    assert 'requested_destination' not in spec


def _group_spec(document_json, members):
    return objects.RequestSpec(
        instance_group=objects.InstanceGroup(
            uuid=uuids.group, name='g', policy='soft-anti-affinity',
            members=members, rules={}, hosts=[]),
        scheduler_hints={'scoped_policies': [document_json]},
        instance_uuid=uuids.new, project_id='p')


def test_scoped_policy_query_edits_the_destination(install, conf):
    conf.config(group='scoped_policies', **{SQ: True})
    topology = racks(**{'rack-1': ['h1'], 'rack-2': ['h2'],
                        'rack-3': ['h3']})
    install(FakeLocator({uuids.m1: 'h1', uuids.m2: 'h2'}), topology)
    spec = _group_spec('{"policies": ["anti-affinity:rack"]}',
                       [uuids.m1, uuids.m2, uuids.new])
    assert ScopedPolicyQueryFilter()(None, spec) is True
    assert spec.requested_destination.forbidden_aggregates == {'rack-1',
                                                               'rack-2'}
    assert spec.requested_destination.aggregates is None


def test_scoped_policy_query_respects_max_query_aggregates(install, conf,
                                                           caplog):
    conf.config(group='scoped_policies', max_query_aggregates=1,
                **{SQ: True})
    topology = racks(**{'rack-1': ['h1'], 'rack-2': ['h2'],
                        'rack-3': ['h3']})
    install(FakeLocator({uuids.m1: 'h1', uuids.m2: 'h2'}), topology)
    spec = _group_spec('{"policies": ["anti-affinity:rack"]}',
                       [uuids.m1, uuids.m2])
    with caplog.at_level('INFO'):
        assert ScopedPolicyQueryFilter()(None, spec) is True
    assert 'requested_destination' not in spec or \
        spec.requested_destination is None
    assert 'exceed [scoped_policies] max_query_aggregates=1' in caplog.text


def test_forbidden_aggregates_from_the_cache(install, conf):
    conf.config(group='scoped_policies', **{FA: True})
    aggs = [topo.AggregateInfo(
        'uuid-win', 'win', ['h1'],
        {'trait:CUSTOM_WINDOWS_LICENSED': 'required'})]
    states = install(FakeLocator())
    states.sources.aggregates = StaticAggregates(aggregates=aggs)
    spec = _plain_spec()
    assert ForbiddenAggregatesFilter()(None, spec) is True
    assert spec.requested_destination.forbidden_aggregates == {'uuid-win'}

    spec = _plain_spec({'trait:CUSTOM_WINDOWS_LICENSED': 'required'})
    assert ForbiddenAggregatesFilter()(None, spec) is True
    assert 'requested_destination' not in spec


def _plain_spec(extra_specs=None):
    """A boot outside any group, its flavor requiring these traits."""
    return objects.RequestSpec(
        flavor=objects.Flavor(vcpus=1, memory_mb=512, root_gb=1,
                              ephemeral_gb=0, swap=0,
                              extra_specs=extra_specs or {}),
        image=objects.ImageMeta.from_dict({'properties': {}}),
        is_bfv=False, instance_group=None)


def test_forbidden_aggregates_are_never_capped(install, conf):
    """Isolation has no host filter to fall back on: every reserved
    aggregate goes into the query, as nova's isolate_aggregates puts
    them, whatever max_query_aggregates says (it caps the query
    filter)."""
    conf.config(group='scoped_policies', max_query_aggregates=1,
                **{FA: True})
    aggs = [topo.AggregateInfo(f'uuid-{n}', f'lic-{n}', [f'h{n}'],
                               {f'trait:CUSTOM_L{n}': 'required'})
            for n in range(3)]
    states = install(FakeLocator())
    states.sources.aggregates = StaticAggregates(aggregates=aggs)
    spec = _plain_spec()
    assert ForbiddenAggregatesFilter()(None, spec) is True
    assert spec.requested_destination.forbidden_aggregates == {
        'uuid-0', 'uuid-1', 'uuid-2'}


@pytest.mark.parametrize('before, added, expected', [
    (None, ['a', 'b'], {'a', 'b'}),          # no Destination yet
    (set(), ['a'], {'a'}),
    ({'a', 'c'}, ['b', 'a'], {'a', 'b', 'c'}),  # what nova's append does
])
def test_forbid_aggregates_adds_to_what_is_there(before, added, expected):
    spec = objects.RequestSpec()
    if before is not None:
        spec.requested_destination = objects.Destination(
            forbidden_aggregates=before)
    base.forbid_aggregates(spec, added)
    assert spec.requested_destination.forbidden_aggregates == expected
    # as nova's public method leaves it, for the same input
    public = objects.RequestSpec(requested_destination=objects.Destination(
        forbidden_aggregates=before)) if before is not None else None
    if public is not None:
        public.requested_destination.append_forbidden_aggregates(added)
        assert public.requested_destination.forbidden_aggregates == expected
    assert 'forbidden_aggregates' in \
        spec.requested_destination.obj_what_changed()
