"""How fresh the scheduler's copy of the aggregates is, per mode.

Without an aggregate listener the trait index is read for every request,
and the copy is compared with nova-scheduler's own view of the
candidates' aggregates (``HostState.aggregates``); with one, the copy
serves alone.
"""

from nova import objects
from oslo_utils.fixture import uuidsentinel as uuids

from nova_scoped_policies.scheduler import aggregate_cache
from nova_scoped_policies import topology as topo

RACK = {'policy_scope': 'rack'}


def agg(uuid, hosts, metadata=None, name=None):
    return objects.Aggregate(uuid=uuid, name=name or uuid[:8],
                             hosts=list(hosts), metadata=dict(metadata or {}))


class World:
    """nova's API database as AggregateList.get_all reads it."""

    def __init__(self, aggregates):
        self.aggregates = aggregates
        self.loads = 0

    def get_all(self, context):
        self.loads += 1
        return [agg(a.uuid, a.hosts, a.metadata, a.name)
                for a in self.aggregates]


def cache(monkeypatch, world, listened=False, read_traits=None):
    monkeypatch.setattr(objects.AggregateList, 'get_all', world.get_all)
    return aggregate_cache.AggregateCache(
        lambda: 3600, listened=lambda: listened,
        read_traits=read_traits or (lambda context: [
            topo.AggregateInfo(a.uuid, a.name, (), a.metadata)
            for a in world.aggregates]))


def test_differences_name_what_the_topology_reads():
    known = {uuids.r1: topo.AggregateInfo(uuids.r1, 'r1',
                                          frozenset({'h1', 'h2'}), RACK),
             uuids.r2: topo.AggregateInfo(uuids.r2, 'r2',
                                          frozenset({'h3'}), RACK)}
    same = [topo.AggregateInfo(uuids.r1, 'r1', ['h2', 'h1'], RACK),
            topo.AggregateInfo(uuids.r2, 'r2', ['h3'], RACK)]
    everything = {uuids.r1, uuids.r2}
    assert aggregate_cache.differences(known, set(), same, everything,
                                       {'h1', 'h3'}) == []
    # an availability zone's metadata or hosts are not the topology's
    zone = topo.AggregateInfo(uuids.az, 'az', ['h1', 'h9'],
                              {'availability_zone': 'az1'})
    assert aggregate_cache.differences(known, set(), same + [zone],
                                       everything | {uuids.az},
                                       {'h1'}) == []
    moved = [topo.AggregateInfo(uuids.r1, 'r1', ['h1', 'h2', 'h3'], RACK)]
    found = aggregate_cache.differences(known, set(), moved, {uuids.r1},
                                        {'h3'})
    assert found == [f'aggregate r1 ({uuids.r1}) hosts changed',
                     f'aggregate r2 ({uuids.r2}) no longer holds h3']
    retagged = [topo.AggregateInfo(uuids.r2, 'r2', ['h3'],
                                   {'policy_scope': 'row'})]
    assert aggregate_cache.differences(known, set(), retagged, {uuids.r2},
                                       {'h3'}) == [
        f'aggregate r2 ({uuids.r2}) metadata changed']
    # a new aggregate counts when its metadata, or a stored scope, says so
    new = topo.AggregateInfo(uuids.new, 'new', ['h1'], {})
    assert aggregate_cache.differences(known, set(), [new], everything | {
        uuids.new}, {'h1'}) == []
    assert aggregate_cache.differences(known, {uuids.new}, [new],
                                       everything | {uuids.new},
                                       {'h1'}) == [
        f'aggregate new ({uuids.new}) is new']
    licence = topo.AggregateInfo(uuids.lic, 'lic', ['h1'],
                                 {'license:WINDOWS': 'allowed'})
    assert aggregate_cache.differences(known, set(), [licence], everything
                                       | {uuids.lic}, {'h1'}) == [
        f'aggregate lic ({uuids.lic}) is new']


def test_without_a_listener_the_traits_are_read_for_every_request(
        monkeypatch):
    world = World([agg(uuids.r1, ['h1'], RACK)])
    reads = []

    def read_traits(context):
        reads.append(context)
        return [topo.AggregateInfo(a.uuid, a.name, (), a.metadata)
                for a in world.aggregates]
    source = cache(monkeypatch, world, read_traits=read_traits)
    assert source.per_request
    assert source.traits('ctx').required == {}
    world.aggregates[0].metadata['trait:CUSTOM_X'] = 'required'
    assert source.traits('ctx').required == {
        uuids.r1: frozenset({'CUSTOM_X'})}
    assert len(reads) == 2 and world.loads == 0


def test_with_a_listener_the_cached_index_serves(monkeypatch):
    world = World([agg(uuids.r1, ['h1'], {'trait:CUSTOM_X': 'required'})])
    source = cache(monkeypatch, world, listened=True)
    assert not source.per_request
    first = source.traits('ctx')
    world.aggregates[0].metadata.clear()
    assert source.traits('ctx') is first
    source.invalidate()
    assert source.traits('ctx').required == {}
    assert world.loads == 2


def test_behind_reloads_once_when_nova_sees_a_move(monkeypatch):
    r1, r2 = agg(uuids.r1, ['h1', 'h2'], RACK), agg(uuids.r2, ['h3'], RACK)
    world = World([r1, r2])
    source = cache(monkeypatch, world)
    before = source.get('ctx')
    assert before.domains_of('rack', 'h3') == (uuids.r2,)
    # nova's view, as nova-scheduler's HostManager hands it out
    nova_r1, nova_r2 = agg(uuids.r1, ['h1', 'h2'], RACK), agg(
        uuids.r2, ['h3'], RACK)
    assert not source.behind('ctx', lambda: ({nova_r1, nova_r2},
                                             {'h1', 'h3'}))
    asked = []

    def view(seen):
        def call():
            asked.append(1)
            return seen, {'h3'}
        return call
    # h3 moves to r1 in the database and in nova's view
    world.aggregates = [agg(uuids.r1, ['h1', 'h2', 'h3'], RACK),
                        agg(uuids.r2, [], RACK)]
    moved = agg(uuids.r1, ['h1', 'h2', 'h3'], RACK)
    assert source.behind('ctx', view({moved}))
    after = source.get('ctx')
    assert after is not before
    assert after.domains_of('rack', 'h3') == (uuids.r1,)
    assert world.loads == 2
    # nova's objects once found equal are not compared again
    assert not source.behind('ctx', view({moved}))
    assert world.loads == 2


def test_behind_does_not_reload_again_when_nova_lags(monkeypatch, caplog):
    world = World([agg(uuids.r1, ['h1'], RACK), agg(uuids.r2, ['h2'],
                                                    RACK)])
    source = cache(monkeypatch, world)
    source.get('ctx')
    # nova-scheduler missed the cast that moved h2 into r1: the database
    # agrees with the copy, nova does not
    lagging = agg(uuids.r1, ['h1', 'h2'], RACK)
    assert source.behind('ctx', lambda: ({lagging}, {'h2'}))
    assert world.loads == 2
    assert 'lags the API database' in caplog.text
    assert not source.behind('ctx', lambda: ({lagging}, {'h2'}))
    assert world.loads == 2


def test_behind_never_compares_with_a_listener(monkeypatch):
    world = World([agg(uuids.r1, ['h1'], RACK)])
    source = cache(monkeypatch, world, listened=True)
    source.get('ctx')

    def view():
        raise AssertionError('nova\'s view read with a listener')
    assert not source.behind('ctx', view)
    assert not aggregate_cache.StaticAggregates().behind('ctx', view)
