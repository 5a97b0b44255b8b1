"""Holds of a stack decision in the real openstack-placement."""

import datetime

import pytest

from nova_scoped_policies.placement import holds
from tests import placement_fixtures as pf

H1 = '11111111-0000-4000-8000-000000000001'
H2 = '11111111-0000-4000-8000-000000000002'
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


@pytest.fixture
def placement():
    """Real Placement (SQLite): two hosts of 8 VCPU and 4096 MB."""
    fixture = pf.real_placement()
    fixture.setUp()
    client = pf.client_for(fixture, '1.38')
    for name, rp in (('h1', H1), ('h2', H2)):
        client.create_provider(name, rp)
        client.set_inventory(rp, 0, {'VCPU': {'total': 8},
                                     'MEMORY_MB': {'total': 4096}})
    yield client
    fixture.cleanUp()


def used(client, rp):
    return client.request('GET', f'/resource_providers/{rp}/usages').json()[
        'usages']


def candidates(client, vcpu):
    resp = client.request('GET', f'/allocation_candidates?resources=VCPU:'
                          f'{vcpu}').json()
    return sorted(resp['provider_summaries'])


DECISION = {'web-0': (H1, {'VCPU': 4, 'MEMORY_MB': 1024}),
            'web-1': (H2, {'VCPU': 6, 'MEMORY_MB': 2048})}


def test_hold_is_atomic_typed_and_counts(placement):
    record = holds.hold(placement, DECISION, 'proj', 'user', 60, now=T0)
    assert set(record.consumers) == {'web-0', 'web-1'}
    assert record.expires_at == T0 + datetime.timedelta(seconds=60)
    assert used(placement, H1) == {'VCPU': 4, 'MEMORY_MB': 1024}
    assert used(placement, H2) == {'VCPU': 6, 'MEMORY_MB': 2048}
    alloc = placement.request(
        'GET', f'/allocations/{record.consumers["web-0"]}',
        version='1.38').json()
    assert alloc['consumer_type'] == holds.CONSUMER_TYPE
    assert alloc['project_id'] == 'proj' and alloc['user_id'] == 'user'
    # held capacity is gone for a boot: 5 VCPU fits on neither host now
    assert candidates(placement, 5) == []
    assert candidates(placement, 4) == [H1]
    # usages per project (what [quota] count_usage_from_placement reads,
    # at nova's microversion 1.9)
    usages = placement.request('GET', '/usages?project_id=proj',
                               version='1.9').json()['usages']
    assert usages == {'VCPU': 10, 'MEMORY_MB': 3072}


def test_one_server_that_does_not_fit_holds_nothing(placement):
    decision = dict(DECISION, big=(H2, {'VCPU': 4}))  # H2: 6 + 4 > 8
    with pytest.raises(holds.RedecideError) as err:
        holds.hold(placement, decision, 'proj', 'user', 60)
    assert err.value.servers == ('big', 'web-0', 'web-1')
    assert used(placement, H1) == {'VCPU': 0, 'MEMORY_MB': 0}
    assert used(placement, H2) == {'VCPU': 0, 'MEMORY_MB': 0}


def test_capacity_taken_meanwhile_means_redecide(placement):
    other = 'cccccccc-0000-4000-8000-00000000000c'
    placement.request('PUT', f'/allocations/{other}', {
        'allocations': {H2: {'resources': {'VCPU': 4}}},
        'project_id': 'someone-else', 'user_id': 'them',
        'consumer_generation': None}, version='1.36')
    with pytest.raises(holds.RedecideError) as err:
        holds.hold(placement, DECISION, 'proj', 'user', 60)
    text = str(err.value)
    assert 're-decide' in text
    assert other not in text and 'someone-else' not in text
    assert H2 not in text
    assert used(placement, H1)['VCPU'] == 0


def test_release_some_then_all_idempotent(placement):
    record = holds.hold(placement, DECISION, 'proj', 'user', 60)
    web1 = record.consumers['web-1']
    holds.release(placement, record, ['web-0'])
    assert used(placement, H1)['VCPU'] == 0
    assert used(placement, H2)['VCPU'] == 6
    assert list(record.consumers) == ['web-1']
    # already gone in Placement (e.g. audit --delete): still fine
    placement.request('DELETE', f'/allocations/{web1}', version='1.38')
    holds.release(placement, record)
    holds.release(placement, record)
    assert record.consumers == {}
    assert candidates(placement, 8) == [H1, H2]


def test_confirm_releases_what_was_never_booted(placement):
    record = holds.hold(placement, DECISION, 'proj', 'user', 60)
    # web-0 booted: its hold was given back as nova claimed it
    holds.release(placement, record, ['web-0'])
    holds.confirm(placement, record, booted=['web-0'])
    assert record.consumers == {}
    assert used(placement, H2)['VCPU'] == 0


def test_renew_expiry_and_reaper(placement):
    first = holds.hold(placement, {'a': (H1, {'VCPU': 2})}, 'p', 'u', 30,
                       now=T0)
    second = holds.hold(placement, {'b': (H2, {'VCPU': 3})}, 'p', 'u', 30,
                        now=T0)
    later = T0 + datetime.timedelta(seconds=40)
    assert holds.renew(second, 60, now=T0 + datetime.timedelta(seconds=20)) \
        == T0 + datetime.timedelta(seconds=80)
    assert holds.expired([first, second], later) == [first]
    # Placement is unchanged by renew: both are still held
    assert used(placement, H1)['VCPU'] == 2
    assert holds.reap(placement, [first, second], later) == [first]
    assert used(placement, H1)['VCPU'] == 0
    assert used(placement, H2)['VCPU'] == 3
    assert holds.reap(placement, [second],
                      T0 + datetime.timedelta(seconds=80)) == [second]
    assert used(placement, H2)['VCPU'] == 0


def test_record_round_trips_as_plain_data():
    record = holds.Hold('h', 'p', 'u', {'a': 'c1'}, T0)
    data = record.to_dict()
    assert data['expires_at'] == '2026-01-01T00:00:00+00:00'
    assert holds.Hold.from_dict(data) == record
    with pytest.raises(ValueError, match='lease_seconds'):
        holds.renew(record, 0)
