"""The nova seam: installed once, explicitly, checked against the nova it
was written for; on any other nova nothing is patched and hard scoped
policies fail closed."""

import logging

from oslo_utils.fixture import uuidsentinel as uuids
import pytest

from nova import objects
from nova.scheduler import host_manager
from nova.scheduler import manager as sched_manager
from nova.scheduler import request_filter
from nova_scoped_policies import nova_seam
from nova_scoped_policies.nova_seam import objects as seam_objects
from nova_scoped_policies.nova_seam import select_destinations
from nova_scoped_policies.nova_seam import simulation
from nova_scoped_policies.scheduler.filters.scoped_anti_affinity import \
    ScopedAntiAffinityFilter
from tests.unit.scheduler.conftest import FakeLocator
from tests.unit.scheduler.conftest import racks


@pytest.fixture
def seam(monkeypatch):
    """A clean seam and nova's own request-filter list and manager."""
    nova_seam.uninstall()
    monkeypatch.setattr(request_filter, 'ALL_REQUEST_FILTERS',
                        list(request_filter.ALL_REQUEST_FILTERS))
    before = list(request_filter.ALL_REQUEST_FILTERS)
    manager = dict(sched_manager.SchedulerManager.__dict__)
    yield before, manager
    nova_seam.uninstall()


def _ours():
    return [f for f in request_filter.ALL_REQUEST_FILTERS
            if type(f).__module__.startswith('nova_scoped_policies')]


def test_installs_once_what_it_says(seam, conf, caplog):
    before, _ = seam
    conf.config(group='scoped_policies',
                enable_scoped_policy_query_filter=True)
    with caplog.at_level(logging.INFO, 'nova_scoped_policies'):
        first = nova_seam.install(force=True)
        filters = list(request_filter.ALL_REQUEST_FILTERS)
        wrapped = sched_manager.SchedulerManager.__dict__[
            'select_destinations']
        again = nova_seam.install(force=True)
    assert first.refused is None
    assert sorted(first.installed[0].split(': ')[1].split(', ')) == [
        'ScopedPlanFilter', 'ScopedPolicyQueryFilter']
    assert first.installed[1] == 'select_destinations'
    assert request_filter.ALL_REQUEST_FILTERS[:len(before)] == before
    assert sorted(type(f).__name__ for f in _ours()) == [
        'ScopedPlanFilter', 'ScopedPolicyQueryFilter']
    assert select_destinations.installed()
    # nova's unit tests built with nova's default notification_format
    assert any('notification_format' in n for n in first.notes)
    # the second call changes nothing and logs nothing more
    assert again.installed == first.installed
    assert request_filter.ALL_REQUEST_FILTERS == filters
    assert sched_manager.SchedulerManager.__dict__[
        'select_destinations'] is wrapped
    assert caplog.text.count('nova seam installed') == 1
    nova_seam.uninstall()
    assert not select_destinations.installed()
    assert request_filter.ALL_REQUEST_FILTERS == before


def test_an_unknown_nova_gets_nothing_patched(seam, monkeypatch, caplog):
    before, manager = seam

    def select_destinations(self, context, spec_obj, instance_uuids):
        pass

    monkeypatch.setattr(sched_manager.SchedulerManager,
                        'select_destinations', select_destinations)
    manager['select_destinations'] = select_destinations
    with caplog.at_level(logging.INFO, 'nova_scoped_policies'):
        found = nova_seam.install(force=True)
        nova_seam.install(force=True)
    assert "takes ('self', 'context', 'spec_obj', 'instance_uuids')" in \
        found.refused
    assert nova_seam.refusal() == found.refused
    assert found.installed == []
    assert request_filter.ALL_REQUEST_FILTERS == before
    assert dict(sched_manager.SchedulerManager.__dict__) == manager
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert 'nothing of nova is patched' in errors[0].getMessage()
    assert 'fail closed' in errors[0].getMessage()


def test_switched_off_nothing_is_patched(seam, conf):
    before, manager = seam
    conf.config(group='scoped_policies', nova_seam=False)
    found = nova_seam.install(force=True)
    assert found.refused == '[scoped_policies] nova_seam is false'
    assert request_filter.ALL_REQUEST_FILTERS == before
    assert dict(sched_manager.SchedulerManager.__dict__) == manager


def test_building_a_filter_outside_a_nova_service_installs_nothing(
        seam, monkeypatch):
    """The simulator and benchmarks build our filters without nova's RPC:
    only nova-scheduler's HostManager installs the seam."""
    before, manager = seam
    from nova import rpc
    monkeypatch.setattr(rpc, 'TRANSPORT', None)
    ScopedAntiAffinityFilter()
    assert request_filter.ALL_REQUEST_FILTERS == before
    assert dict(sched_manager.SchedulerManager.__dict__) == manager
    assert nova_seam.status().installed == []


def _spec(document):
    return objects.RequestSpec(
        instance_group=objects.InstanceGroup(
            uuid=uuids.group, name='g', policy='soft-anti-affinity',
            members=[uuids.m1], rules={}, hosts=[]),
        scheduler_hints={'scoped_policies': [document]},
        instance_uuid=uuids.new, project_id='p')


def _hosts(*names):
    return [host_manager.HostState(n, n, None) for n in names]


def test_hard_scoped_policies_fail_closed_without_the_seam(
        seam, conf, install, monkeypatch, caplog):
    monkeypatch.setattr(select_destinations, 'check', _refuse)
    nova_seam.install(force=True)
    install(FakeLocator({uuids.m1: 'h1'}), racks(**{'rack-1': ['h1'],
                                                    'rack-2': ['h2']}))
    hard = _spec('{"policies": ["anti-affinity:rack"]}')
    soft = _spec('{"policies": ["soft-anti-affinity:rack"]}')
    with caplog.at_level(logging.INFO, 'nova_scoped_policies'):
        assert ScopedAntiAffinityFilter().filter_all(
            _hosts('h1', 'h2'), hard) == []
    assert 'need the nova seam, which is not installed: nova changed' \
        in caplog.text
    assert [h.host for h in ScopedAntiAffinityFilter().filter_all(
        _hosts('h1', 'h2'), soft)] == ['h1', 'h2']
    # with the seam, the same request is decided by its policies
    monkeypatch.undo()
    nova_seam.uninstall()
    nova_seam.install(force=True)
    install(FakeLocator({uuids.m1: 'h1'}), racks(**{'rack-1': ['h1'],
                                                    'rack-2': ['h2']}))
    assert [h.host for h in ScopedAntiAffinityFilter().filter_all(
        _hosts('h1', 'h2'), _spec('{"policies": ["anti-affinity:rack"]}')
    )] == ['h2']


def test_without_the_seam_the_host_filters_isolate(
        seam, conf, install, monkeypatch):
    """The forbidden-aggregates request filter is not in nova's list
    without the seam: our host filters keep every request out of the
    aggregates reserved by traits it lacks, by nova's view of the hosts'
    aggregates, groups or not."""
    conf.config(group='scoped_policies',
                enable_forbidden_aggregates_filter=True)
    monkeypatch.setattr(select_destinations, 'check', _refuse)
    nova_seam.install(force=True)
    install(FakeLocator(), racks(**{'rack-1': ['h1'], 'rack-2': ['h2']}))
    hosts = _hosts('h1', 'h2')
    licensed = objects.Aggregate(uuid=uuids.win, name='win', hosts=['h1'],
                                 metadata={'trait:CUSTOM_WIN': 'required'})
    hosts[0].aggregates = [licensed]

    def plain(extra_specs):
        return objects.RequestSpec(
            flavor=objects.Flavor(vcpus=1, memory_mb=512, root_gb=1,
                                  ephemeral_gb=0, swap=0,
                                  extra_specs=extra_specs),
            image=objects.ImageMeta.from_dict({'properties': {}}),
            is_bfv=False, instance_group=None, scheduler_hints={},
            instance_uuid=uuids.new, project_id='p')
    passed = ScopedAntiAffinityFilter().filter_all(hosts, plain({}))
    assert [h.host for h in passed] == ['h2']
    passed = ScopedAntiAffinityFilter().filter_all(hosts, plain(
        {'trait:CUSTOM_WIN': 'required'}))
    assert [h.host for h in passed] == ['h1', 'h2']
    # with the seam, the request filter does it (the host filter does not)
    monkeypatch.undo()
    nova_seam.uninstall()
    nova_seam.install(force=True)
    assert [h.host for h in ScopedAntiAffinityFilter().filter_all(
        hosts, plain({}))] == ['h1', 'h2']


def _refuse(cls=None):
    raise nova_seam.UnknownNova('nova changed')


class _Context:
    def elevated(self):
        return 'the request, elevated'


def test_the_request_context_is_the_spec_s_elevated():
    spec = objects.RequestSpec(_Context())
    assert seam_objects.request_context(spec) == 'the request, elevated'


def test_the_simulator_s_nova_internals_are_known():
    simulation.check()
    request = simulation.unlimited(
        __import__('nova.scheduler.utils', fromlist=['x']).ResourceRequest())
    assert 'limit=' not in request.to_querystring()
