"""The serialisation wrapper around nova's select_destinations (the nova
seam's), the locks it takes, and the locator that counts members in
flight."""

import inspect
import logging
import threading
import types
import time

from keystoneauth1 import exceptions as ks_exc
from oslo_messaging.rpc import dispatcher
from oslo_utils.fixture import uuidsentinel as uuids
import pytest

from nova import exception
from nova.scheduler import manager as sched_manager
from nova_scoped_policies.nova_seam import aggregates
from nova_scoped_policies.nova_seam import checks
from nova_scoped_policies.nova_seam import select_destinations as seam_sd
from nova_scoped_policies.scheduler import coordination
from nova_scoped_policies.scheduler import members
from nova_scoped_policies.scheduler import stores


def test_nova_select_destinations_is_what_the_wrapper_expects():
    # Fails when a nova release changes the method we wrap: the wrapper
    # passes every one of these parameters on by name.
    seam_sd.check(sched_manager.SchedulerManager)


def test_other_parameters_are_refused():
    class Changed:
        def select_destinations(self, context, spec_obj, instance_uuids):
            pass

    with pytest.raises(checks.UnknownNova, match='not supported'):
        seam_sd.install(Changed)
    assert Changed.__dict__['select_destinations'].__name__ == \
        'select_destinations'
    assert not seam_sd.installed(Changed)


def test_install_is_idempotent_and_reversible():
    class Manager:
        _sentinel = object()

        def select_destinations(
                self, context, request_spec=None, filter_properties=None,
                spec_obj=_sentinel, instance_uuids=None,
                return_objects=False, return_alternates=False):
            return 'nova'

    original = Manager.__dict__['select_destinations']
    seam_sd.install(Manager)
    wrapped = Manager.__dict__['select_destinations']
    assert wrapped is not original
    assert seam_sd.installed(Manager)
    seam_sd.install(Manager)
    assert Manager.__dict__['select_destinations'] is wrapped
    seam_sd.uninstall(Manager)
    assert Manager.__dict__['select_destinations'] is original


def test_wrapper_keeps_the_parameters_and_expected_exceptions():
    assert tuple(inspect.signature(
        checks.undecorated(seam_sd._serialised(
            sched_manager.SchedulerManager.__dict__[
                'select_destinations']), 'select_destinations')).parameters) \
        == seam_sd.EXPECTED_PARAMETERS


def _spec_args():
    return dict(context=None, request_spec=None, filter_properties=None,
                spec_obj=object(), instance_uuids=None)


def test_lock_is_held_through_nova_and_bounded(monkeypatch, tmp_path):
    """Two callers for one group run one after the other; a third that
    cannot get the lock in time gets NoValidHost with a reason."""
    monkeypatch.setattr(coordination, '_coordinator', None)
    from oslo_config import cfg
    conf = cfg.CONF
    conf.set_override('coordination_backend_url',
                      f'file://{tmp_path}',
                      group='scoped_policies')
    conf.set_override('coordination_lock_timeout', 0.5,
                      group='scoped_policies')
    try:
        inside = []

        def nova(self, context, request_spec=None, filter_properties=None,
                 spec_obj=None, instance_uuids=None, return_objects=False,
                 return_alternates=False):
            inside.append('in')
            time.sleep(0.3)
            inside.append('out')
            return 'ok'

        class States:
            def serialised(self, spec):
                return (uuids.group,)

        monkeypatch.setattr(
            'nova_scoped_policies.scheduler.state.states', States)
        wrapped = seam_sd._serialised(nova)
        # Start the backend before the threads: after nova's functional
        # tests have monkey-patched threading, these threads are green
        # while the module's lock was made real at import, and a green
        # switch inside the tooz start would block the other one for good.
        coordination.coordinator()
        results = []
        threads = [threading.Thread(target=lambda: results.append(
            wrapped(None, **_spec_args()))) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == ['ok', 'ok']
        assert inside == ['in', 'out', 'in', 'out']

        conf.set_override('coordination_lock_timeout', 0.1,
                          group='scoped_policies')
        lock = coordination.coordinator().lock(uuids.group)
        assert lock.acquire()
        try:
            with pytest.raises(dispatcher.ExpectedException) as caught:
                wrapped(None, **_spec_args())
            # refused without entering nova
            assert inside == ['in', 'out', 'in', 'out']
            reason = caught.value.exc_info[1]
            assert isinstance(reason, exception.NoValidHost)
            assert 'fail closed' in str(reason)
        finally:
            lock.release()
    finally:
        coordination.reset()
        conf.clear_override('coordination_backend_url',
                            group='scoped_policies')
        conf.clear_override('coordination_lock_timeout',
                            group='scoped_policies')


class _Cells:
    def __init__(self, hosts):
        self.hosts = hosts

    def locate(self, context, member_uuids):
        return {u: self.hosts.get(u) for u in member_uuids
                if u in self.hosts}


class _Placement:
    def __init__(self, allocations):
        self.allocations = allocations
        self.calls = []

    def get_allocs_for_consumer(self, context, consumer):
        self.calls.append(consumer)
        return {'allocations': self.allocations.get(consumer, {})}


def test_members_in_flight_are_located_from_their_claims(monkeypatch):
    placement = _Placement({uuids.flying: {uuids.node3: {'resources': {}}}})
    locator = members.InFlightMemberLocator(
        cells=_Cells({uuids.placed: 'h1', uuids.building: None}),
        placement=lambda: placement)
    monkeypatch.setattr(locator, '_provider_hosts',
                        lambda ctx, rps: {uuids.node3: 'h3'} if rps else {})
    found = locator.locate(None, [uuids.placed, uuids.building,
                                  uuids.flying])
    assert found == {uuids.placed: 'h1', uuids.building: None,
                     uuids.flying: 'h3'}
    # one call per unplaced member, none for placed ones or per host
    assert sorted(placement.calls) == sorted([uuids.building, uuids.flying])


class _DownPlacement:
    """Placement that takes ``delay`` s to fail, as a connect timeout."""

    def __init__(self, delay):
        self.delay = delay
        self.calls = 0
        self.up = False

    def get_allocs_for_consumer(self, context, consumer):
        self.calls += 1
        if self.up:
            return {'allocations': {}}
        time.sleep(self.delay)
        raise ks_exc.ConnectFailure('connect timed out')


def test_placement_failure_opens_a_circuit_breaker(caplog):
    """An unreachable Placement costs one bounded call, then lookups fail
    at once with what the cells know until the retry interval is over;
    the outage is logged once when it starts and once when it ends."""
    placement = _DownPlacement(0.3)
    interval = [60.0]
    locator = members.InFlightMemberLocator(
        cells=_Cells({uuids.placed: 'h1'}), placement=lambda: placement,
        retry_interval=lambda: interval[0])
    wanted = [uuids.placed, uuids.flying]
    with caplog.at_level(logging.INFO):
        for _ in range(5):
            with pytest.raises(members.MemberLookupError) as caught:
                locator.locate(None, wanted)
            assert caught.value.partial == {uuids.placed: 'h1',
                                            uuids.flying: None}
        # the four lookups after the first failed without asking
        # Placement (no bounded wait): the breaker is open
        assert placement.calls == 1
        assert 'read again in 60 s' in str(caught.value)
        placement.up = True
        locator._open_until = 0  # the interval is over
        found = locator.locate(None, wanted)
        assert found == {uuids.placed: 'h1', uuids.flying: None}
        locator.locate(None, wanted)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and 'fail closed' in errors[0].getMessage()
    assert caplog.text.count('returns the claims of group members again') \
        == 1


def test_aggregate_events_mark_the_cache_stale_and_nothing_else():
    calls = []
    endpoint = aggregates.AggregateEvents(lambda: calls.append('stale'))
    endpoint.info({}, 'nova-api:api', 'aggregate.add_host.end', {}, {})
    assert calls == ['stale'] and endpoint.received == 1
    rule = aggregates.AggregateEvents.filter_rule
    for action in ('add_host', 'remove_host', 'update_metadata',
                   'update_prop', 'delete'):
        assert rule.match({}, 'api:h', f'aggregate.{action}.end', {}, {})
    for other in ('aggregate.add_host.start', 'aggregate.create.end',
                  'instance.create.end', 'aggregate.cache_images.end'):
        assert not rule.match({}, 'api:h', other, {}, {})


def test_nova_aggregate_methods_are_left_alone():
    # the seam keeps the aggregate cache fresh from notifications: nova's
    # aggregate RPC methods stay nova's own
    for name in ('update_aggregates', 'delete_aggregate'):
        method = sched_manager.SchedulerManager.__dict__[name]
        assert method.__module__ == 'nova.scheduler.manager'
        assert not hasattr(method, '_nova_scoped_policies_wrapped')


class _FlakyDriver(stores.PolicyStoreDriver):
    def __init__(self):
        self.down = True
        self.calls = 0

    def _answer(self, value):
        self.calls += 1
        if self.down:
            raise stores.StoreUnavailable('database gone')
        return value

    def scopes(self):
        return self._answer([])

    def group(self, uuid):
        return self._answer(None)

    def groups(self):
        return self._answer([])


def test_circuit_breaker_spares_the_store_and_logs_once(caplog):
    now = [100.0]
    driver = _FlakyDriver()
    store = stores.CachedStore(driver, lambda: 0, clock=lambda: now[0],
                               retry_interval=lambda: 10.0)
    caplog.set_level(logging.WARNING)
    for _ in range(50):
        with pytest.raises(stores.StoreUnavailable):
            store.group(uuids.group)
        assert store.scopes() == []
        now[0] += 0.1
    assert driver.calls == 1  # one try per retry interval, not per request
    errors = [r for r in caplog.records if 'unreachable' in r.getMessage()]
    assert len(errors) == 1
    now[0] += 10
    driver.down = False
    assert store.group(uuids.group) is None
    assert driver.calls == 2
    assert any('reachable again' in r.getMessage() for r in caplog.records)


class _GroupOfSpec:
    """``state.states()`` stand-in: the spec names its serialised group."""

    def serialised(self, spec):
        return (spec.group_uuid,) if spec.group_uuid else ()


def _wrapped(monkeypatch, decide):
    """nova's select_destinations answering ``decide(context)``, wrapped;
    each request's spec names its group."""
    def nova(self, context, request_spec=None, filter_properties=None,
             spec_obj=None, instance_uuids=None, return_objects=False,
             return_alternates=False):
        return decide(context)
    monkeypatch.setattr('nova_scoped_policies.scheduler.state.states',
                        _GroupOfSpec)
    return seam_sd._serialised(nova)


def test_without_a_backend_one_process_is_serialised(monkeypatch):
    """No coordination_backend_url: requests of one scheduler process for
    one group still run one after the other (per-group local locks), and
    requests for different groups do not wait for each other."""
    monkeypatch.setattr(coordination, '_coordinator', None)
    inside = []

    def decide(context):
        inside.append(('in', context))
        time.sleep(0.2)
        inside.append(('out', context))
        return 'ok'
    wrapped = _wrapped(monkeypatch, decide)

    def boot(group, name):
        args = dict(_spec_args(), context=name,
                    spec_obj=types.SimpleNamespace(group_uuid=group))
        return wrapped(None, **args)
    try:
        threads = [threading.Thread(target=boot, args=(uuids.group, n))
                   for n in ('a', 'b')]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [step for step, _ in inside] == ['in', 'out', 'in', 'out']
        assert isinstance(coordination.coordinator(),
                          coordination.LocalCoordinator)
        inside.clear()
        threads = [threading.Thread(target=boot, args=(group, group))
                   for group in (uuids.one, uuids.other)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [step for step, _ in inside][:2] == ['in', 'in']
    finally:
        coordination.reset()


def test_hard_scoped_groups_get_no_alternates(monkeypatch):
    """nova-conductor would claim an alternate without the scheduler when
    a build fails: a group with hard scoped policies gets none; other
    requests keep nova's alternates untouched."""
    monkeypatch.setattr(coordination, '_coordinator', None)

    wrapped = _wrapped(monkeypatch,
                       lambda context: [['h1', 'h2', 'h3'], ['h4', 'h5']])

    def select(group, **kwargs):
        args = dict(_spec_args(), spec_obj=types.SimpleNamespace(
            group_uuid=group), **kwargs)
        return wrapped(None, **args)
    try:
        assert select(uuids.group, return_objects=True,
                      return_alternates=True) == [['h1'], ['h4']]
        assert select(None, return_objects=True, return_alternates=True) \
            == [['h1', 'h2', 'h3'], ['h4', 'h5']]
        # the legacy (dict) answer is passed on as nova built it
        assert select(uuids.group) == [['h1', 'h2', 'h3'], ['h4', 'h5']]
    finally:
        coordination.reset()


def test_several_locks_are_taken_in_order_and_given_back(monkeypatch):
    """A stack server's request holds every lock it names (the stack's,
    its group's, the groups it relates to); one it cannot have fails the
    request closed and gives back those it took."""
    monkeypatch.setattr(coordination, '_coordinator', None)
    conf = coordination.CONF
    conf.set_override('coordination_lock_timeout', 0.1,
                      group='scoped_policies')
    names = tuple(sorted((uuids.plan, uuids.group, uuids.related)))

    class States:
        def serialised(self, spec):
            return names
    monkeypatch.setattr('nova_scoped_policies.scheduler.state.states',
                        States)
    seen = []

    def nova(self, context, *args, **kwargs):
        coord = coordination.coordinator()
        # while deciding, every lock is taken
        seen.append([not coord.lock(n).acquire(blocking=False)
                     for n in names])
        return 'ok'
    wrapped = seam_sd._serialised(nova)
    try:
        assert wrapped(None, **_spec_args()) == 'ok'
        assert seen == [[True, True, True]]
        # one held elsewhere: refused, the others given back
        other = coordination.coordinator().lock(names[-1])
        assert other.acquire()
        with pytest.raises(dispatcher.ExpectedException) as caught:
            wrapped(None, **_spec_args())
        assert 'fail closed' in str(caught.value.exc_info[1])
        for name in names[:-1]:
            lock = coordination.coordinator().lock(name)
            assert lock.acquire(blocking=False)
            lock.release()
        other.release()
    finally:
        conf.clear_override('coordination_lock_timeout',
                            group='scoped_policies')


@pytest.mark.parametrize('url, expected', [
    ('redis://127.0.0.1:6379',
     'redis://127.0.0.1:6379?socket_timeout=8&socket_connect_timeout=8'),
    ('redis://:secret@r:6379/0?socket_timeout=2',
     'redis://:secret@r:6379/0?socket_timeout=2&socket_connect_timeout=8'),
    ('etcd3+http://127.0.0.1:2379', 'etcd3+http://127.0.0.1:2379'),
])
def test_every_redis_socket_call_is_bounded(url, expected):
    assert coordination._bounded_url(url, 7.5) == expected


def test_the_log_names_the_backend_without_credentials():
    assert coordination._shown('redis://:secret@r:6379/0?x=1') == \
        'redis://r:6379/0'


def test_a_silent_lock_service_fails_closed_within_the_timeout(
        monkeypatch):
    """A backend whose calls never return (Redis accepting connections
    and never answering, #37): the boot fails within
    coordination_lock_timeout, the reason names the lock service, and
    the next boot connects afresh."""
    released = threading.Event()
    stopped = threading.Event()

    class Silent:
        url = 'redis://127.0.0.1:1'

        def lock(self, name):
            return self

        def acquire(self, blocking=True):
            released.wait()      # never answers (until the test ends)
            return True

        def release(self):
            pass

        def stop(self):
            stopped.set()
    silent = Silent()
    monkeypatch.setattr(coordination, '_coordinator', silent)
    monkeypatch.setattr(coordination, 'coordinator', lambda: silent)
    conf = coordination.CONF
    conf.set_override('coordination_lock_timeout', 0.2,
                      group='scoped_policies')
    try:
        with pytest.raises(exception.NoValidHost, match='lock service'):
            coordination.acquired([uuids.group])
        assert stopped.wait(5)
        assert coordination._coordinator is None
    finally:
        released.set()
        conf.clear_override('coordination_lock_timeout',
                            group='scoped_policies')
