"""The repair service: the records a caller reads in, the targets it may
repair, the servers that may make room or must stay, and when a wide read
is asked for."""

import dataclasses
import logging

import pytest

from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.repair import planner
from nova_scoped_policies.repair import service
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope

SPREAD = parse_document({'policies': ['anti-affinity:host']})
NEAR = parse_document({'policies': ['soft-affinity:host']})
TOGETHER = parse_document({'policies': ['affinity:host']})
MINE, THEIRS = 'project-a', 'project-b'
TENANT = service.Who(MINE, False)
G = service.Asked(service.GROUP, 'g')
EXISTING = '0e0e0e0e-0e0e-4e0e-8e0e-0e0e0e0e0e0e'


def hosts(**free):
    """host -> (VCPU, MEMORY_MB) left."""
    return tuple(planner.Host(h, {'VCPU': c, 'MEMORY_MB': m})
                 for h, (c, m) in sorted(free.items()))


def server(sid, host, vcpu=1, ram=512, project=MINE, **fields):
    return service.Server(sid, host, {'VCPU': vcpu, 'MEMORY_MB': ram},
                          project, **fields)


def full_cloud(k_document=NEAR, wide=True, **changes):
    """Issue 37's cloud: g's two servers share hA; hB is full of another
    project's k (its memory); hC has room for one of k, not for one of
    g."""
    servers = {s.id: s for s in (
        server('g1', 'hA', 2, 1024), server('g2', 'hA', 2, 1024),
        server('k1', 'hB', 1, 4096, THEIRS),
        server('k2', 'hB', 1, 4096, THEIRS))}
    groups = (service.Group('g', MINE, SPREAD, ('g1', 'g2')),
              service.Group('k', THEIRS, k_document, ('k1', 'k2')))
    cloud = service.Cloud(hosts(hA=(0, 0), hB=(2, 0), hC=(1, 4096)),
                          servers, groups, (), Topology(), wide)
    for key, value in changes.items():
        cloud = dataclasses.replace(cloud, **{key: value})
    return cloud


def test_a_bystander_makes_room_and_keeps_its_groups_hard_policies():
    found = service.plan(lambda wide: full_cloud(), G, TENANT, 5.0)
    assert found.plan.status == planner.REPAIRED, found.plan
    assert [(m.server[0], m.source, m.destination)
            for m in found.plan.moves] == [('k', 'hB', 'hC'),
                                           ('g', 'hA', 'hB')]
    problem = found.assembled.problem
    assert [t.id for t in problem.targets] == ['g']
    assert [t.id for t in problem.kept] == ['k']
    # who each server is, for the tenant's view ("another server")
    assert found.assembled.projects == {'g1': MINE, 'g2': MINE,
                                        'k1': THEIRS, 'k2': THEIRS}
    assert found.assembled.owners == {'g': MINE}
    # k's affinity hard: no repair
    hard = service.plan(lambda wide: full_cloud(TOGETHER), G, TENANT, 5.0)
    assert hard.plan.status == planner.IMPOSSIBLE
    assert 'even with other servers moved' in hard.plan.reason


def test_without_bystanders_only_the_targets_servers_are_planned():
    found = service.assemble(full_cloud(), G, TENANT, bystanders=False)
    assert set(found.problem.servers) == {'g1', 'g2'}
    assert found.problem.kept == ()


def reader(gid, reads, **changes):
    """``read(wide)`` of the full cloud: narrow, the group ``gid`` and its
    servers; each read noted in ``reads``."""
    def read(wide):
        reads.append(wide)
        cloud = full_cloud(wide=wide, **changes)
        if wide:
            return cloud
        (group,) = [g for g in cloud.groups if g.id == gid]
        return service.Cloud(cloud.hosts, {s: cloud.servers[s]
                                           for s in group.members},
                             (group,), (), cloud.topology, False)
    return read


def test_a_narrow_read_is_widened_only_when_it_may_take_fewer_moves():
    reads = []
    found = service.plan(reader('g', reads), G, TENANT, 5.0)
    assert reads == [False, True]
    assert len(found.plan.moves) == 2
    assert set(found.assembled.problem.servers) == {'g1', 'g2', 'k1', 'k2'}
    # nothing broken: one read
    reads.clear()
    calm = service.plan(reader('k', reads),
                        service.Asked(service.GROUP, 'k'), service.ADMIN,
                        5.0)
    assert (reads, calm.plan.status) == ([False], planner.NOTHING)
    # one move of the target's own: one read
    reads.clear()
    room = hosts(hA=(0, 0), hB=(2, 0), hC=(2, 4096))
    one = service.plan(reader('g', reads, hosts=room), G, TENANT, 5.0)
    assert (reads, len(one.plan.moves)) == ([False], 1)
    # a cloud read wide already is not read again
    reads.clear()
    service.plan(lambda wide: reads.append(wide) or full_cloud(), G,
                 TENANT, 5.0)
    assert reads == [False]


@pytest.mark.parametrize('asked, who', [
    (service.Asked(service.GROUP, 'k'), TENANT),
    (service.Asked(service.GROUP, 'nope'), service.ADMIN),
    (service.Asked(service.STACK, 'nope'), service.ADMIN),
    (service.Asked(), TENANT),
])
def test_another_projects_target_is_answered_as_missing(asked, who):
    with pytest.raises(service.NotFound):
        service.assemble(full_cloud(), asked, who)


def test_an_administrator_may_repair_any_projects_target():
    found = service.assemble(full_cloud(), service.Asked(service.GROUP, 'k'),
                             service.ADMIN)
    assert [t.id for t in found.problem.targets] == ['k']


def test_a_stack_that_cannot_be_read_is_refused_or_left_out(caplog):
    broken = service.Stack('s', MINE, {'stack': {'name': 'x'}})
    cloud = full_cloud(stacks=(broken,))
    with pytest.raises(service.Unreadable):
        service.assemble(cloud, service.Asked(service.STACK, 's'), TENANT)
    with caplog.at_level(logging.WARNING):
        found = service.assemble(cloud, service.Asked(), service.ADMIN)
    assert [t.id for t in found.problem.targets] == ['g', 'k']
    assert 'cannot be read any more' in caplog.text


def test_a_stack_over_its_instances_and_the_ends_of_its_relationships():
    topology = Topology([Scope('rack')], [
        Domain('r1', 'r1', 'rack', frozenset({'hA', 'hB'})),
        Domain('r2', 'r2', 'rack', frozenset({'hC'}))])
    document = {'stack': {'name': 'app', 'group': {
        'name': 'web', 'servers': {'count': 1, 'flavor': {
            'resources': {'VCPU': 1}}}},
        'relationships': [{'from': 'web', 'to': {'server': EXISTING},
                           'policies': ['anti-affinity:rack']}]}}
    assert service.existing(document) == ((EXISTING,), ())
    other = EXISTING
    stack = service.Stack('st', MINE, document, {'web-1': 'w'},
                          {other: 'hB'})
    cloud = service.Cloud(hosts(hA=(4, 4096), hB=(4, 4096), hC=(4, 4096)),
                          {'w': server('w', 'hA'),
                           other: server(other, 'hB')},
                          (), (stack,), topology)
    found = service.plan(lambda wide: cloud,
                         service.Asked(service.STACK, 'st'), TENANT, 5.0)
    assert found.assembled.names == {'w': 'web-1'}
    assert [(m.server, m.destination) for m in found.plan.moves] == [
        ('w', 'hC')]


def test_a_server_that_may_not_move_stays_and_one_off_the_hosts_is_out():
    servers = {s.id: s for s in (
        server('g1', 'hA', movable=False), server('g2', 'hA'),
        server('x', 'gone'))}
    cloud = service.Cloud(hosts(hA=(4, 4096), hB=(4, 4096)), servers,
                          (service.Group('g', MINE, SPREAD, ('g1', 'g2')),),
                          (), Topology())
    found = service.plan(lambda wide: cloud, G, TENANT, 5.0)
    # x runs on a host the cloud does not offer (down): no bystander
    assert set(found.assembled.problem.servers) == {'g1', 'g2'}
    assert [(m.server, m.destination) for m in found.plan.moves] == [
        ('g2', 'hB')]
    stays = found.assembled.problem.servers['g1'].required
    assert [h.name for h in found.assembled.problem.hosts
            if stays <= h.traits] == ['hA']
