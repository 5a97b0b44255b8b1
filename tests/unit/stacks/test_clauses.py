"""A stack's policies as the engine's requests, for one server: what the
scheduler evaluates at every boot and move of a stack's servers."""

from nova_scoped_policies import engine
from nova_scoped_policies.stacks import clauses
from nova_scoped_policies.stacks import live
from tests.unit.stacks import test_solver as ts

WORLD = ts.make_world([2, 2, 2], lambda r, i: {'VCPU': 8})
HA = ts.stack({'name': 'root', 'policies': ['anti-affinity:rack'],
               'members': [
                   ts.leaf('c1', 2, 1, ['affinity:rack',
                                        'anti-affinity:host']),
                   ts.leaf('c2', 2, 1, ['affinity:rack'])]})


def passing(stack, placed, name, world=WORLD, moving=None):
    """The hosts server ``name`` may go to."""
    requests = live.requests(stack, world, placed, name, moving or {})
    evaluation = engine.join(engine.Engine().prepare(r) for r in requests)
    return sorted(h.name for h in world.hosts
                  if evaluation is None or not evaluation.reasons(h.name))


def test_a_leaf_counts_its_own_servers_and_across_the_other_groups():
    placed = {'c1-1': 'r0h0', 'c2-1': 'r1h0', 'c2-2': 'r1h1'}
    # c1-2: in c1's rack (affinity), not on c1-1's host, not in c2's rack
    assert passing(HA, placed, 'c1-2') == ['r0h1']
    # a server of c2 may share its rack with c2 but not with c1
    assert passing(HA, dict(placed, **{'c1-2': 'r0h1'}), 'c2-2') == [
        'r1h0', 'r1h1']


def test_a_moving_server_does_not_count_against_itself():
    placed = {'c1-1': 'r0h0', 'c1-2': 'r0h1', 'c2-1': 'r1h0',
              'c2-2': 'r1h1'}
    # c1-1 moving: c1-2 pins the rack, its own host is free again
    assert passing(HA, placed, 'c1-1') == ['r0h0']


def test_a_server_on_its_way_counts_on_its_destination_too():
    placed = {'c1-1': 'r0h0', 'c1-2': 'r0h1', 'c2-1': 'r1h0'}
    assert passing(HA, placed, 'c2-2') == ['r1h0', 'r1h1']
    # c2-1 on its way to rack 2 is a member in both racks: c1 may use
    # neither, and c2-2 may join it in either
    assert passing(HA, placed, 'c1-2', moving={'c2-1': ['r2h0']}) == [
        'r0h1']
    assert passing(HA, placed, 'c2-2', moving={'c2-1': ['r2h0']}) == [
        'r1h0', 'r1h1', 'r2h0', 'r2h1']
    # and a spread counts both places
    spread = ts.stack(ts.leaf('w', 3, 1, ['anti-affinity:rack']))
    assert passing(spread, {'w-1': 'r0h0'}, 'w-2',
                   moving={'w-1': ['r1h0']}) == ['r2h0', 'r2h1']


def test_relationships_count_existing_servers_only_across():
    world = ts.make_world([2, 2, 2], lambda r, i: {'VCPU': 8},
                          servers={'11111111-1111-1111-1111-111111111111':
                                   'r2h0'})
    stack = ts.stack(ts.leaf('w', 2, 1, ['affinity:rack']), [
        {'from': 'w', 'to': {'server': '11111111-1111-1111-1111-'
                                       '111111111111'},
         'policies': ['anti-affinity:rack']}])
    assert passing(stack, {}, 'w-1', world) == [
        'r0h0', 'r0h1', 'r1h0', 'r1h1']
    assert passing(stack, {'w-1': 'r1h0'}, 'w-2', world) == [
        'r1h0', 'r1h1']


def test_check_server_is_the_same_requests():
    placed = {'c1-1': 'r0h0', 'c2-1': 'r1h0'}
    found = clauses.check_server(clauses.compile_stack(HA, WORLD),
                                 WORLD.topology, placed, 'c1-2', 'r1h1')
    # the policy across the clusters first (document order), then c1's
    assert [m.split(':')[0] for m in found] == ['anti-affinity',
                                                'affinity']


def test_the_audit_gives_the_plugins_verdicts():
    placed = {'c1-1': 'r0h0', 'c1-2': 'r1h1', 'c2-1': 'r1h0',
              'c2-2': 'r1h1'}
    found = live.audit(HA, WORLD, placed)
    assert found.status == live.VIOLATED
    by_field = {p.field: p for p in found.policies}
    across = by_field['stack.group']
    # across the clusters the member groups are what counts
    assert across.kind == live.ACROSS and across.violations == (
        'anti-affinity:rack: rack1 holds 2 of max 1 (c1, c2)',)
    c1 = by_field['stack.group.members[0]']
    assert c1.kind == live.GROUP and c1.violations == (
        'affinity:rack: members are in 2 domains (rack0, rack1)',)
    c2 = by_field['stack.group.members[1]']
    assert c2.status == live.OK and c2.policies == ('affinity:rack',)
    assert found.servers['c1-1'] == 'r0h0'


def test_a_split_affinity_group_is_a_violation_every_server_passes():
    # each server has another in its rack, so no host check rejects any;
    # the affinity plugin's audit sees the group in two racks
    spread = ts.stack(ts.leaf('w', 4, 1, ['affinity:rack']))
    placed = {'w-1': 'r0h0', 'w-2': 'r0h1', 'w-3': 'r1h0', 'w-4': 'r1h1'}
    assert passing(spread, placed, 'w-1') != []
    assert live.audit(spread, WORLD, placed).violations == (
        'affinity:rack: members are in 2 domains (rack0, rack1)',)


def test_an_existing_server_is_one_end_of_a_relationship():
    uuid = '11111111-1111-1111-1111-111111111111'
    world = ts.make_world([2, 2], lambda r, i: {'VCPU': 8},
                          servers={uuid: 'r1h0'})
    stack = ts.stack(ts.leaf('w', 2, 1), [
        {'from': 'w', 'to': {'server': uuid},
         'policies': ['anti-affinity:rack']}])
    ok = live.audit(stack, world, {'w-1': 'r0h0', 'w-2': 'r0h1'})
    assert ok.status == live.OK
    (rel,) = live.audit(stack, world, {'w-1': 'r0h0', 'w-2': 'r1h1'}
                        ).policies
    assert rel.kind == live.RELATIONSHIP and rel.violations == (
        'anti-affinity:rack: rack1 holds 2 of max 1 (existing server, w)',)


def test_no_server_name_meets_an_existing_server():
    # a group named existing (servers existing-1, existing-2) related to
    # an existing server group on r1h0 and r2h0: its members count
    group = '22222222-2222-2222-2222-222222222222'
    world = ts.make_world([2, 2, 2], lambda r, i: {'VCPU': 8},
                          server_groups={group: ('r1h0', 'r2h0')})
    for name in ('web', 'existing', 'server_group'):
        stack = ts.stack(ts.leaf(name, 2, 1), [
            {'from': name, 'to': {'server_group': group},
             'policies': ['anti-affinity:rack']}])
        assert passing(stack, {}, f'{name}-1', world) == ['r0h0', 'r0h1']
        broken = live.audit(stack, world, {f'{name}-1': 'r1h1'})
        assert broken.status == live.VIOLATED, name
