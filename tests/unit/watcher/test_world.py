"""The planner's world read from Watcher's compute data model, the policy
store and Nova: capacity, the servers that may move, targets, domains."""

import pytest

from nova_scoped_policies.repair import planner
from nova_scoped_policies.watcher import world
from tests.unit.watcher import fakes

RACKS = {'rack-1': ['h11', 'h12'], 'rack-2': ['h21', 'h22']}


@pytest.fixture
def store(tmp_path):
    return fakes.store(tmp_path / 'store.sqlite', RACKS)


def nodes(**fields):
    return [fakes.node(h, **fields.get(h, {}))
            for hs in RACKS.values() for h in hs]


def test_hosts_have_what_watcher_counts_left_and_holds_take():
    model = fakes.compute_model(
        nodes(h12={'vcpu_ratio': 2.0, 'vcpu_reserved': 1},
              h21={'status': 'disabled'}, h22={'state': 'down'}),
        {'a': 'h11', 'b': 'h12'})

    class Held:
        held = {'web-1': 'consumer'}
        servers = {'web-1': type('S', (), {
            'provider': fakes.uid('node/h11'), 'host': 'h11',
            'resources': {'VCPU': 1, 'MEMORY_MB': 1024}})}
    hosts = {h.name: h for h in world._hosts(model, world._held([Held]))}
    assert hosts['h11'].free == {'VCPU': 0, 'MEMORY_MB': 8192 - 512 - 1024,
                                 'DISK_GB': 99}
    assert hosts['h12'].free['VCPU'] == (2 - 1) * 2 - 1
    assert hosts['h21'].free == hosts['h22'].free == {
        'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}
    assert hosts['h11'].provider == fakes.uid('node/h11')


def test_a_group_over_the_model_and_the_aggregates(store):
    gid = fakes.group(store, 'db', ['anti-affinity:rack'], ['a'])
    nova = fakes.Nova(RACKS, {gid: ['b', 'c']})
    model = fakes.compute_model(nodes(), {'a': 'h11', 'b': 'h12',
                                          'c': 'h21', 'other': 'h22'})
    problem = world.read(model, store, nova)
    [target] = problem.targets
    assert (target.kind, target.id) == (planner.GROUP, gid)
    assert target.servers == {fakes.uid(m) for m in 'abc'}
    # the instance of no group is a bystander that may make room
    assert set(problem.servers) == target.servers | {fakes.uid('other')}
    assert not problem.servers[fakes.uid('other')].required
    assert set(world.read(model, store, nova, bystanders=False).servers
               ) == target.servers
    assert problem.servers[fakes.uid('a')] == planner.Server(
        fakes.uid('a'), 'h11', {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1})
    assert problem.topology.domains_of('rack', 'h12') == (
        fakes.uid('rack-1'),)
    assert [h.name for h in problem.hosts] == ['h11', 'h12', 'h21', 'h22']
    assert len(planner.violations(problem)) == 1


def test_members_watcher_does_not_place_are_left_out(store):
    fakes.group(store, 'db', ['anti-affinity:rack'], ['a', 'gone'])
    model = fakes.compute_model(nodes(), {'a': 'h11'})
    problem = world.read(model, store, fakes.Nova(RACKS))
    assert set(problem.servers) == {fakes.uid('a')}


@pytest.mark.parametrize('fields', [{'state': 'stopped'},
                                    {'watcher_exclude': True}])
def test_servers_that_cannot_be_live_migrated_stay(store, fields):
    fakes.group(store, 'db', ['anti-affinity:rack'], ['a', 'b'])
    model = fakes.compute_model(nodes(), {'a': 'h11', 'b': 'h12'},
                                b=fields)
    problem = world.read(model, store, fakes.Nova(RACKS))
    stays = problem.servers[fakes.uid('b')].required
    assert stays and not problem.servers[fakes.uid('a')].required
    assert [h.name for h in problem.hosts if stays <= h.traits] == ['h12']
    found = planner.plan(problem)
    assert [(m.server, m.source) for m in found.moves] == [
        (fakes.uid('a'), 'h11')]


def test_a_stack_decision_over_its_booted_instances(store):
    booted = {'p-1': ('p1', 'h11'), 'p-2': ('p2', 'h21')}
    sid = fakes.stack(store, 's', fakes.PAIRS, booted,
                      held={'q-1': ('h22', {'VCPU': 2})})
    model = fakes.compute_model(nodes(), {'p1': 'h11', 'p2': 'h21'})
    problem = world.read(model, store, fakes.Nova(RACKS))
    [target] = problem.targets
    assert (target.kind, target.id) == (planner.STACK, sid)
    assert target.servers == {fakes.uid('p1'), fakes.uid('p2')}
    assert {h.name: h.free['VCPU'] for h in problem.hosts}['h22'] == 0
    assert planner.violations(problem)


def test_a_stack_that_cannot_be_read_is_left_out(store, caplog):
    fakes.stack(store, 'broken', {'stack': {'name': 'x'}}, {})
    model = fakes.compute_model(nodes(), {})
    assert world.read(model, store, fakes.Nova(RACKS)).targets == ()
    assert 'cannot be read any more' in caplog.text


@pytest.mark.parametrize('fields', [
    {'state': 'stopped'}, {'watcher_exclude': True}, {'locked': True},
    {'flavor_extra_specs': {'trait:CUSTOM_SSD': 'required'}},
    {'flavor_extra_specs': {'trait:CUSTOM_GPU': 'forbidden'}}])
def test_bystanders_that_may_not_be_moved_to_make_room_stay(store, fields):
    # a member would still move, nova-scheduler checking its traits
    fakes.group(store, 'db', ['anti-affinity:rack'], ['a', 'b'])
    model = fakes.compute_model(nodes(), {'a': 'h11', 'b': 'h12',
                                          'other': 'h21', 'free': 'h22'},
                                other=fields, b=dict(fields, state='active',
                                                     watcher_exclude=False))
    problem = world.read(model, store, fakes.Nova(RACKS))
    stays = problem.servers[fakes.uid('other')].required
    assert stays
    assert [h.name for h in problem.hosts if stays <= h.traits] == ['h21']
    assert not problem.servers[fakes.uid('free')].required
    assert not problem.servers[fakes.uid('b')].required
