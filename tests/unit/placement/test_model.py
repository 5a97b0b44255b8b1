"""The in-memory Placement model without HTTP: what it holds, the
candidates it lists and the writes it refuses (its REST layer,
``placement.fake``, is held to the real Placement by
tests/functional/test_placement_conformance.py)."""

import pytest

from nova_scoped_policies.placement import model

AGG = 'a5f6a1b1-0000-4000-8000-000000000001'


def _inventory(total, **extra):
    return dict({'total': total, 'reserved': 0, 'min_unit': 1,
                 'max_unit': total, 'step_size': 1,
                 'allocation_ratio': 1.0}, **extra)


@pytest.fixture
def world():
    placement = model.Placement()
    for n in (1, 2):
        placement.add_provider(f'rp{n}', f'h{n}')
        placement.set_inventories(f'rp{n}', 0, {'VCPU': _inventory(4)})
    placement.set_aggregates('rp1', 1, [AGG])
    placement.add_trait('CUSTOM_GOLD')
    placement.set_traits('rp2', 1, ['CUSTOM_GOLD'])
    return placement


def _query(resources, required=(), forbidden=(), member_in=(),
           member_out=(), limit=None):
    return model.CandidateQuery(
        resources, frozenset(required), frozenset(forbidden),
        tuple(frozenset(m) for m in member_in), frozenset(member_out), limit)


@pytest.mark.parametrize('query, names', [
    (_query({'VCPU': 4}), ['h1', 'h2']),
    (_query({'VCPU': 5}), []),
    (_query({'VCPU': 1, 'CUSTOM_GPU': 1}), []),
    (_query({'VCPU': 1}, required=['CUSTOM_GOLD']), ['h2']),
    (_query({'VCPU': 1}, forbidden=['CUSTOM_GOLD']), ['h1']),
    (_query({'VCPU': 1}, member_in=[{AGG}]), ['h1']),
    (_query({'VCPU': 1}, member_out=[AGG]), ['h2']),
    (_query({'VCPU': 1}, limit=1), ['h1']),
], ids=['fits', 'too big', 'unknown class', 'required', 'forbidden',
        'member_of', 'not member_of', 'limit'])
def test_candidates(world, query, names):
    assert [p.name for p in world.candidates(query)] == names


def test_names_and_generations_conflict(world):
    with pytest.raises(model.Conflict, match='h1 already exists'):
        world.add_provider('rp3', 'h1')
    with pytest.raises(model.Conflict, match='generation conflict'):
        world.set_aggregates('rp1', 0, [])
    with pytest.raises(model.NotFound):
        world.provider('rp9')
    with pytest.raises(model.Invalid, match='CUSTOM_NONE'):
        world.set_traits('rp1', 2, ['CUSTOM_NONE'])
    assert world.find(name='h2')[0].uuid == 'rp2'
    assert [p.name for p in world.find(member_in=[{AGG}])] == ['h1']


def test_claims_and_writes(world):
    assert world.claim('c1', {'rp1': {'VCPU': 3}}, 'p', 'u')
    assert not world.claim('c2', {'rp1': {'VCPU': 2}}, 'p', 'u')
    assert not world.claim('c1', {'rp2': {'VCPU': 1}}, 'p', 'u')
    assert world.used('rp1')['VCPU'] == 3
    with pytest.raises(model.Conflict, match='consumer generation'):
        world.write('c1', model.Write({}, 'p', 'u', expected_generation=7))
    with pytest.raises(model.Conflict, match='in use'):
        world.set_inventories('rp1', world.provider('rp1').generation, {})
    world.write('c1', model.Write({'rp1': {'VCPU': 4}}, 'p', 'u',
                                  expected_generation=1))
    assert world.consumers['c1'].generation == 2
    world.delete('c1')
    assert world.used('rp1')['VCPU'] == 0
    with pytest.raises(model.NotFound):
        world.delete('c1')


def test_write_many_is_all_or_nothing(world):
    assert world.claim('old', {'rp1': {'VCPU': 2}}, 'p', 'u')
    before = world.provider('rp1').generation
    with pytest.raises(model.Conflict, match='capacity'):
        world.write_many({
            'old': model.Write({'rp1': {'VCPU': 1}}, 'p', 'u'),
            'new': model.Write({'rp1': {'VCPU': 4}}, 'p', 'u')})
    assert world.consumers['old'].allocations == {'rp1': {'VCPU': 2}}
    assert 'new' not in world.consumers
    assert world.used('rp1')['VCPU'] == 2
    # moving the old claim away frees room for the new one, in one write
    world.write_many({
        'old': model.Write({'rp2': {'VCPU': 2}}, 'p', 'u'),
        'new': model.Write({'rp1': {'VCPU': 4}}, 'p', 'u')})
    assert world.used('rp1')['VCPU'] == 4
    assert world.provider('rp1').generation == before + 1
    # the consumer that takes the room may come first in the body (a
    # migration's swap on a full host): the writes are checked together
    world.write_many({
        'mig': model.Write({'rp1': {'VCPU': 4}}, 'p', 'u'),
        'new': model.Write({}, 'p', 'u')})
    assert world.consumers['mig'].allocations == {'rp1': {'VCPU': 4}}
    assert 'new' not in world.consumers


# Each inventory field, with the amounts Placement takes and refuses on
# a provider of 8 VCPU: one call of the query, the claim and the atomic
# write, and the same through the fake's REST API.
FIELDS = [
    ('allocation_ratio', 2.0, [1, 16], [17]),
    ('reserved', 3, [1, 5], [6]),
    ('min_unit', 2, [2, 8], [1]),
    ('max_unit', 4, [1, 4], [5, 8]),
    ('step_size', 3, [3, 6], [1, 4, 8]),
]


def _fielded(field, value):
    placement = model.Placement()
    placement.add_provider('rp1', 'h1')
    placement.set_inventories('rp1', 0, {'VCPU': model.inventory(
        {'total': 8, field: value})})
    return placement


@pytest.mark.parametrize('field, value, taken, refused', FIELDS,
                         ids=[f[0] for f in FIELDS])
def test_each_inventory_field_is_honoured(field, value, taken, refused):
    for amount in taken + refused:
        placement = _fielded(field, value)
        fits = amount in taken
        assert bool(placement.candidates(_query({'VCPU': amount}))) == fits
        assert placement.claim('c', {'rp1': {'VCPU': amount}}, 'p',
                               'u') == fits
        placement = _fielded(field, value)
        write = {'c': model.Write({'rp1': {'VCPU': amount}}, 'p', 'u')}
        if fits:
            placement.write_many(write)
        else:
            with pytest.raises(model.Conflict):
                placement.write_many(write)


@pytest.mark.parametrize('field, value, taken, refused', FIELDS,
                         ids=[f[0] for f in FIELDS])
def test_each_inventory_field_over_the_rest_api(field, value, taken,
                                                refused):
    from nova_scoped_policies.placement import client as pc
    from nova_scoped_policies.placement import fake
    from nova_scoped_policies.simulator import embedded
    client = embedded.InProcessClient(fake.FakePlacement())
    rp = '6a1c8a64-8f5e-4c0e-a7a9-0d5b1e1f0001'
    generation = client.create_provider('h1', rp)['generation']
    client.set_inventory(rp, generation, {'VCPU': {'total': 8,
                                                   field: value}})
    for n, amount in enumerate(taken + refused):
        listed = client.request(
            'GET', f'/allocation_candidates?resources=VCPU:{amount}',
            version='1.36').json()['allocation_requests']
        assert bool(listed) == (amount in taken), amount
        consumer = f'6a1c8a64-8f5e-4c0e-a7a9-0d5b1e1f1{n:03d}'
        body = {'allocations': {rp: {'resources': {'VCPU': amount}}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None}
        if amount in taken:
            client.put_allocations(consumer, body)
            client.delete_allocations(consumer)
        else:
            with pytest.raises(pc.PlacementError) as caught:
                client.put_allocations(consumer, body)
            assert caught.value.status == 409


def test_an_inventory_without_max_unit_has_placements():
    """Placement's own default: its largest integer, not the total (at an
    allocation ratio above 1, one allocation may exceed the total)."""
    assert model.inventory({'total': 8})['max_unit'] == 2 ** 31 - 1
    placement = _fielded('allocation_ratio', 4.0)
    assert placement.claim('c', {'rp1': {'VCPU': 20}}, 'p', 'u')


def test_member_of_listings_follow_aggregate_changes(world):
    """A ``member_of`` listing reads an index of each aggregate's
    members, made at the first listing and kept in step after."""
    other = 'a5f6a1b1-0000-4000-8000-000000000002'

    def names(*member_in, out=frozenset()):
        return [p.name for p in world.find(member_in=member_in,
                                           member_out=out)]
    assert names({AGG}) == ['h1'] and names({other}) == []
    world.set_aggregates('rp2', 2, [AGG, other])
    world.set_aggregates('rp1', 2, [other])
    assert names({AGG}) == ['h2'] and names({AGG, other}) == ['h1', 'h2']
    assert names({AGG}, {other}) == ['h2']
    assert names({other}, out={AGG}) == ['h1']
    world.add_provider('rp3', 'h3')
    world.remove_provider('rp1')
    assert names({other}) == ['h2']
