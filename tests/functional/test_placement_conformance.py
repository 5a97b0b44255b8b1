"""The fake Placement answers like the real one.

Every case runs against openstack-placement (real code on SQLite) and
against nova_scoped_policies.placement.fake, through our keystoneauth1
client, and must give the same answer - and the expected one.
"""

import pytest

from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import fake
from tests import placement_fixtures as pf

AGG_A = 'a0a0a0a0-0000-4000-8000-00000000000a'
AGG_B = 'b0b0b0b0-0000-4000-8000-00000000000b'
RP = {name: f'{i:08d}-0000-4000-8000-000000000000'
      for i, name in enumerate(['rp1', 'rp2', 'rp3', 'rp4'], start=1)}
NAME = {uuid: name for name, uuid in RP.items()}
C = {name: f'c0c0c0c0-0000-4000-8000-00000000000{i}'
     for i, name in enumerate(['c1', 'c2', 'c3', 'c4', 'nobody'])}
WIN = 'CUSTOM_WINDOWS_LICENSED'
INV = {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096}}


def build(placement):
    """rp1: A, WIN | rp2: A+B, 6 VCPU used | rp3: B, small | rp4: no
    aggregate, AVX2, 8 VCPU with 6 reserved and ratio 2.0, no memory."""
    placement.create_trait(WIN)
    for name, uuid in RP.items():
        placement.create_provider(name, uuid)
    placement.set_inventory(RP['rp1'], 0, INV)
    placement.set_inventory(RP['rp2'], 0, INV)
    placement.set_inventory(RP['rp3'], 0, {'VCPU': {'total': 2},
                                           'MEMORY_MB': {'total': 1024}})
    placement.set_inventory(RP['rp4'], 0, {'VCPU': {
        'total': 8, 'reserved': 6, 'allocation_ratio': 2.0}})
    placement.set_aggregates(RP['rp1'], 1, [AGG_A])
    placement.set_aggregates(RP['rp2'], 1, [AGG_A, AGG_B])
    placement.set_aggregates(RP['rp3'], 1, [AGG_B])
    placement.set_traits(RP['rp1'], 2, [WIN])
    placement.set_traits(RP['rp4'], 1, ['HW_CPU_X86_AVX2'])
    placement.put_allocations(C['c1'], {
        'allocations': {RP['rp2']: {'resources': {'VCPU': 6}}},
        'project_id': 'p', 'user_id': 'u', 'consumer_generation': None})


@pytest.fixture(scope='module')
def backends():
    """(real client, fake client), each built with the same world."""
    real = pf.real_placement()
    real.setUp()
    fixture = pf.FakePlacementFixture()
    fixture.setUp()
    clients = (pf.client_for(real), pf.client_for(fixture))
    for client in clients:
        build(client)
    yield clients
    fixture.cleanUp()
    real.cleanUp()


def answer(client, method, url, version=pc.DEFAULT_VERSION, body=None):
    """(status, normalised body) of one request."""
    resp = client.request(method, url, body, version=version,
                          ok=range(100, 600))
    if resp.status_code >= 400 or not resp.content:
        return resp.status_code, None
    data = resp.json()
    if 'allocation_requests' in data:
        summaries = data['provider_summaries']
        return resp.status_code, {
            NAME[rp]: {'resources': summaries[rp]['resources'],
                       'traits': summaries[rp].get('traits')}
            for req in data['allocation_requests']
            for rp in req['allocations']}
    return resp.status_code, data


def both(backends, *args, **kwargs):
    real, fake_ = (answer(c, *args, **kwargs) for c in backends)
    assert real == fake_
    return real


@pytest.mark.parametrize('query, expected', [
    ('resources=VCPU:1', ['rp1', 'rp2', 'rp3', 'rp4']),
    ('resources=VCPU:4', ['rp1', 'rp4']),
    ('resources=VCPU:5', ['rp1']),
    ('resources=VCPU:1,MEMORY_MB:2048', ['rp1', 'rp2']),
    ('resources=VCPU:1&member_of=in:' + AGG_A, ['rp1', 'rp2']),
    ('resources=VCPU:1&member_of=' + AGG_B, ['rp2', 'rp3']),
    ('resources=VCPU:1&member_of=in:' + AGG_A + ',' + AGG_B,
     ['rp1', 'rp2', 'rp3']),
    ('resources=VCPU:1&member_of=in:' + AGG_A + '&member_of=in:' + AGG_B,
     ['rp2']),
    ('resources=VCPU:1&member_of=!in:' + AGG_A, ['rp3', 'rp4']),
    ('resources=VCPU:1&member_of=!in:' + AGG_A + ',' + AGG_B, ['rp4']),
    ('resources=VCPU:1&member_of=!' + AGG_B, ['rp1', 'rp4']),
    ('resources=VCPU:1&member_of=in:' + AGG_B + '&member_of=!in:' + AGG_A,
     ['rp3']),
    ('resources=VCPU:1&required=' + WIN, ['rp1']),
    ('resources=VCPU:1&required=!' + WIN, ['rp2', 'rp3', 'rp4']),
    ('resources=VCPU:1&required=HW_CPU_X86_AVX2,!' + WIN, ['rp4']),
    ('resources=VCPU:1&required=' + WIN + '&member_of=!in:' + AGG_A, []),
    ('resources=VCPU:3&member_of=in:' + AGG_B, []),
    # what nova-scheduler sends (1.35+): traits of the root provider
    ('resources=VCPU:1&root_required=!' + WIN, ['rp2', 'rp3', 'rp4']),
    ('resources=VCPU:1&root_required=HW_CPU_X86_AVX2', ['rp4']),
])
def test_allocation_candidates(backends, query, expected):
    status, found = both(backends, 'GET', f'/allocation_candidates?{query}')
    assert status == 200
    assert sorted(found) == expected


def test_candidate_summaries_report_capacity_and_use(backends):
    status, found = both(backends, 'GET',
                         '/allocation_candidates?resources=VCPU:1')
    assert found['rp2']['resources']['VCPU'] == {'capacity': 8, 'used': 6}
    assert found['rp4']['resources']['VCPU'] == {'capacity': 4, 'used': 0}
    assert found['rp1']['traits'] == [WIN]


def test_limit(backends):
    real, fake_ = (answer(c, 'GET', '/allocation_candidates?'
                          'resources=VCPU:1&limit=2') for c in backends)
    assert real[0] == fake_[0] == 200
    assert len(real[1]) == len(fake_[1]) == 2


@pytest.mark.parametrize('query, expected', [
    ('', ['rp1', 'rp2', 'rp3', 'rp4']),
    ('?member_of=' + AGG_A, ['rp1', 'rp2']),
    ('?member_of=in:' + AGG_A + ',' + AGG_B, ['rp1', 'rp2', 'rp3']),
    ('?member_of=!in:' + AGG_A, ['rp3', 'rp4']),
    ('?member_of=in:' + AGG_B + '&member_of=!in:' + AGG_A, ['rp3']),
    ('?name=rp3', ['rp3']),
])
def test_list_providers(backends, query, expected):
    # what the policy service asks to find the hosts of an aggregate
    status, found = both(backends, 'GET', f'/resource_providers{query}')
    assert status == 200
    assert sorted(p['name'] for p in found['resource_providers']) == \
        expected


@pytest.mark.parametrize('query, version, status', [
    ('resources=VCPU:1&member_of=!in:' + AGG_A, '1.31', 400),
    ('resources=VCPU:1&member_of=in:' + AGG_A + '&member_of=in:' + AGG_B,
     '1.23', 400),
    ('resources=VCPU:1&member_of=' + AGG_A, '1.20', 400),
    ('resources=VCPU:1&required=!' + WIN, '1.21', 400),
    ('resources=VCPU:1&required=' + WIN, '1.16', 400),
    ('resources=VCPU:1&limit=1', '1.15', 400),
    ('resources=VCPU:1&root_required=' + WIN, '1.34', 400),
    ('resources=VCPU:1&required=CUSTOM_NOPE', '1.36', 400),
    ('resources=VCPU:1&member_of=not-a-uuid', '1.36', 400),
    ('resources=VCPU:1&member_of=' + AGG_A + ',' + AGG_B, '1.36', 400),
    ('resources=VCPU', '1.36', 400),
    ('resources=VCPU:0', '1.36', 400),
    ('resources=VCPU:1&limit=0', '1.36', 400),
    ('resources=VCPU:1&bogus=1', '1.36', 400),
    ('member_of=in:' + AGG_A, '1.36', 400),
    ('resources=VCPU:1', '1.99', 406),
    ('resources=VCPU:1', '1.9', 404),
])
def test_microversions_and_bad_queries(backends, query, version, status):
    assert both(backends, 'GET', f'/allocation_candidates?{query}',
                version=version)[0] == status


def test_bad_version_header_is_400(backends):
    for client in backends:
        resp = client.adapter.get(
            '/', raise_exc=False,
            headers={'OpenStack-API-Version': 'placement one'})
        assert resp.status_code == 400


@pytest.mark.parametrize('header, status', [
    ('placement LATEST', 400),      # only "latest" is the newest
    ('placement +1.5', 200),        # numbers as int() reads them
    ('placement 1.99', 406),
])
def test_version_headers_read_as_placement_reads_them(
        backends, header, status):
    for client in backends:
        resp = client.adapter.get(
            '/resource_providers', raise_exc=False,
            headers={'OpenStack-API-Version': header})
        assert resp.status_code == status
        # an unusable header gets no version back
        assert ('OpenStack-API-Version' in resp.headers) == (status == 200)


@pytest.mark.parametrize('header, version', [
    ('placement 1.10, compute 2.1', '1.10'),   # other services ignored
    ('compute 2.1', '1.0'),                    # none for placement
])
def test_version_header_naming_several_services(backends, header, version):
    for client in backends:
        resp = client.adapter.get(
            '/resource_providers', raise_exc=False,
            headers={'OpenStack-API-Version': header})
        assert resp.status_code == 200
        assert resp.headers['OpenStack-API-Version'] == \
            f'placement {version}'


@pytest.mark.parametrize('method, url, body, status', [
    ('GET', '/resource_providers/' + RP['rp1'], None, 200),
    ('GET', '/resource_providers/00000000-0000-4000-8000-0000000000ff',
     None, 404),
    ('POST', '/resource_providers', {'name': 'rp1'}, 409),
    ('POST', '/resource_providers', {}, 400),
    ('GET', '/resource_providers/' + RP['rp2'] + '/usages', None, 200),
    ('GET', '/resource_providers/' + RP['rp2'] + '/aggregates', None, 200),
    ('GET', '/resource_providers/' + RP['rp1'] + '/traits', None, 200),
    ('PUT', '/resource_providers/' + RP['rp1'] + '/traits',
     {'traits': ['CUSTOM_NOPE'], 'resource_provider_generation': 3}, 400),
    ('PUT', '/resource_providers/' + RP['rp1'] + '/aggregates',
     {'aggregates': [AGG_A], 'resource_provider_generation': 0}, 409),
    ('PUT', '/resource_providers/' + RP['rp3'] + '/inventories',
     {'inventories': {'VCPU': {'total': 2}},
      'resource_provider_generation': 0}, 409),
    ('PUT', '/traits/HW_CPU_X86_AVX2', None, 400),
    ('PUT', '/traits/' + WIN, None, 204),
    ('GET', '/allocations/' + C['c1'], None, 200),
    ('GET', '/allocations/' + C['nobody'], None, 200),
    ('DELETE', '/allocations/' + C['nobody'], None, 404),
    ('GET', '/allocations/not-a-uuid', None, 200),
    ('DELETE', '/allocations/not-a-uuid', None, 404),
    ('PUT', '/allocations/not-a-uuid', {'allocations': {}}, 400),
    ('DELETE', '/resource_providers/' + RP['rp1'] + '/traits/x', None, 404),
])
def test_resources(backends, method, url, body, status):
    found = both(backends, method, url, body=body)
    assert found[0] == status
    if url.endswith('/usages'):
        assert found[1]['usages'] == {'VCPU': 6, 'MEMORY_MB': 0}
    if url == '/allocations/' + C['c1']:
        assert found[1]['allocations'][RP['rp2']]['resources'] == {
            'VCPU': 6}
        assert found[1]['consumer_generation'] == 1


def test_allocations_claim_conflict_and_release(backends):
    def claim(consumer, vcpu, generation=None, version='1.36'):
        return both(backends, 'PUT', f'/allocations/{C[consumer]}', body={
            'allocations': {RP['rp3']: {'resources': {'VCPU': vcpu}}},
            'project_id': 'p', 'user_id': 'u',
            'consumer_generation': generation}, version=version)[0]

    assert claim('c2', 3) == 409                  # over capacity (2)
    assert claim('c2', 2) == 204
    assert claim('c3', 1) == 409                  # rp3 is now full
    assert claim('c2', 1) == 409                  # wrong consumer gen
    assert claim('c2', 1, generation=1) == 204    # shrink: 1 used
    assert claim('c3', 1) == 204
    status, found = both(backends, 'GET',
                         '/allocation_candidates?resources=VCPU:1'
                         '&member_of=in:' + AGG_B)
    assert sorted(found) == ['rp2']
    assert both(backends, 'DELETE', '/allocations/' + C['c2'])[0] == 204
    assert both(backends, 'DELETE', '/allocations/' + C['c3'])[0] == 204
    assert both(backends, 'GET', '/resource_providers/' + RP['rp3'] +
                '/usages')[1]['usages']['VCPU'] == 0
    # 1.38 wants consumer_type
    assert claim('c4', 1, version='1.38') == 400


def test_check_version_accepts_current_placement(backends):
    for client in backends:
        assert client.check_version() == '1.39'


def test_check_version_refuses_placement_older_than_1_32():
    fixture = pf.FakePlacementFixture(fake.FakePlacement(max_version='1.29'))
    fixture.setUp()
    try:
        client = pf.client_for(fixture, version='1.29')
        with pytest.raises(pc.PlacementVersionError) as err:
            client.check_version()
        assert 'up to 1.29' in str(err.value)
        assert 'needs 1.32' in str(err.value)
    finally:
        fixture.cleanUp()


def test_post_allocations_is_all_or_nothing(backends):
    """Holds of a stack decision: several consumers in one request."""
    H = {f'h{i}': f'd0d0d0d0-0000-4000-8000-00000000000{i}'
         for i in range(1, 5)}

    def post(allocations, version='1.38', generation=None):
        body = {H[c]: {'allocations': {RP[rp]: {'resources': {'VCPU': n}}
                                       for rp, n in alloc.items()},
                       'project_id': 'p', 'user_id': 'u',
                       'consumer_generation': generation,
                       'consumer_type': 'SCOPED_POLICY_HOLD'}
                for c, alloc in allocations.items()}
        if version < '1.38':
            for value in body.values():
                value.pop('consumer_type')
        return both(backends, 'POST', '/allocations', body=body,
                    version=version)[0]

    def used(rp):
        return both(backends, 'GET', f'/resource_providers/{RP[rp]}/usages'
                    )[1]['usages'].get('VCPU', 0)

    # rp3 has 2 VCPU: together the two do not fit, so neither is written
    assert post({'h1': {'rp3': 1}, 'h2': {'rp3': 2}}) == 409
    assert used('rp3') == 0
    assert post({'h1': {'rp3': 1}, 'h2': {'rp3': 1}, 'h3': {'rp1': 4}}
                ) == 204
    assert (used('rp3'), used('rp1')) == (2, 4)
    status, found = both(backends, 'GET', '/allocations/' + H['h3'],
                         version='1.38')
    assert found['consumer_type'] == 'SCOPED_POLICY_HOLD'
    # a new consumer must say generation None; existing ones their own
    assert post({'h1': {'rp3': 1}}) == 409
    assert post({'h1': {'rp3': 1}}, generation=1) == 204
    # consumer_type is required at 1.38, unknown before 1.13
    assert post({'h4': {'rp1': 1}}, version='1.36') == 204
    assert both(backends, 'POST', '/allocations', body={},
                version='1.12')[0] == 404
    for consumer in ('h1', 'h2', 'h3', 'h4'):
        assert both(backends, 'DELETE', '/allocations/' + H[consumer]
                    )[0] == 204


@pytest.mark.parametrize('method, url, body, version, status', [
    # member_of on /resource_providers from 1.3, provider traits from 1.6
    ('GET', '/resource_providers?member_of=' + AGG_A, None, '1.2', 400),
    ('GET', '/resource_providers/' + RP['rp1'] + '/traits', None, '1.5',
     404),
    ('GET', '/resource_providers?required=in:' + WIN, None, '1.38', 400),
    ('GET', '/resource_providers?required=in:' + WIN + ',HW_CPU_X86_AVX2',
     None, '1.39', 200),
    ('GET', '/allocation_candidates?resources=VCPU:1&required=in:' + WIN,
     None, '1.39', 200),
    # bad uuids, over-long names
    ('POST', '/resource_providers', {'name': 'x', 'uuid': 'not-a-uuid'},
     '1.36', 400),
    ('POST', '/resource_providers', {'name': 'x' * 201}, '1.36', 400),
    ('PUT', '/resource_providers/' + RP['rp1'] + '/aggregates',
     {'aggregates': ['not-a-uuid'], 'resource_provider_generation': 0},
     '1.36', 400),
    # empty allocations before 1.28, a body without a generation: 400
    ('PUT', '/allocations/' + C['nobody'],
     {'allocations': {}, 'project_id': 'p', 'user_id': 'u'}, '1.12', 400),
    ('PUT', '/resource_providers/' + RP['rp1'] + '/aggregates',
     {'aggregates': []}, '1.36', 400),
    ('PUT', '/resource_providers/' + RP['rp1'] + '/inventories',
     {'inventories': {}}, '1.36', 400),
    ('PUT', '/allocations/' + C['nobody'],
     {'allocations': {RP['rp1']: {'resources': {'VCPU': 1}}},
      'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
      'consumer_type': 'bad type'}, '1.38', 400),
    ('DELETE', '/resource_providers/' + RP['rp2'], None, '1.36', 409),
    ('GET', '/usages?project_id=p', None, '1.36', 200),
])
def test_status_codes_of_issue_16(backends, method, url, body, version,
                                  status):
    assert both(backends, method, url, version=version, body=body)[0] == \
        status
