"""The pure part of an export: a read cloud as a scenario document
(nova_scoped_policies.export)."""

import json
import uuid

import pytest

from nova_scoped_policies.db import records
from nova_scoped_policies import export
from nova_scoped_policies import policy
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies import topology as topo

RACK_1 = '0b7d4a3e-2f0c-4a57-9d55-3f3c8b1f0a11'
RACK_2 = '5e0c2e27-1c1b-4bb4-8d5c-8a5e1e7f2b01'
ZONE = '9d1b7a52-6f0e-4d8e-9b8f-0c7a1f3e5d21'
NAMESPACE = '6f72348f-df5d-4e0f-a043-4be92996dbfe'
G_DB = '11111111-1111-4111-8111-111111111111'
G_WEB = '22222222-2222-4222-8222-222222222222'
G_OTHER = '33333333-3333-4333-8333-333333333333'
FLAVOR = {'VCPU': 2, 'MEMORY_MB': 2048}


APP_A = export.Stack('a1', 'app', 'tenant-a', {'stack': {
    'name': 'app', 'group': {
        'name': 'root', 'policies': ['anti-affinity:rack'],
        'members': [{'name': 'fe', 'servers': {
            'names': ['fe-a', 'fe-b'],
            'flavor': {'resources': {'VCPU': 1}}}}]},
    'relationships': [
        {'from': 'fe', 'to': {'server_group': G_DB},
         'policies': ['soft-affinity:rack']}]}})
APP_B = export.Stack('b1', 'app', 'tenant-b', {'stack': {
    'name': 'app', 'group': {'name': 'x', 'servers': {
        'count': 1, 'flavor': {'resources': {'VCPU': 1}}}}}})


def server(n, name, host, project, group=None):
    return export.Server(f'{n:08d}-0000-4000-8000-000000000000', name,
                         host, project, dict(FLAVOR), group)


def cloud(**changes):
    inventories = {'VCPU': export.Inventory(8, 0, 4.0),
                   'MEMORY_MB': export.Inventory(16384, 512, 1.5),
                   'DISK_GB': export.Inventory(100, 0, 1.0)}
    found = dict(
        scopes=(records.ScopeRecord('rack', aggregates=(RACK_1, RACK_2)),
                records.ScopeRecord('zone', allow_identifiers=True,
                                    obfuscate_identifiers=True,
                                    obfuscate_namespace_uuid=NAMESPACE,
                                    aggregates=(ZONE,))),
        hosts=tuple(export.Host(h, inventories, ('CUSTOM_SSD',))
                    for h in ('h1', 'h2', 'h3')),
        aggregates=(export.Aggregate(RACK_1, 'rack-1', ('h1', 'h2'), 'rack'),
                    export.Aggregate(RACK_2, 'rack-2', ('h3',), 'rack'),
                    export.Aggregate(ZONE, 'zone-a', ('h1', 'h2', 'h3'),
                                     'zone')),
        groups=(export.Group(G_DB, 'db', 'tenant-a', policy.parse_document(
                    {'policies': ['anti-affinity:rack',
                                  f'affinity:zone:{ZONE}'],
                     'rules': {'max_server_per_rack': 2}})),
                export.Group(G_WEB, 'web', 'tenant-a', policy.parse_document(
                    {'policies': ['soft-anti-affinity:host']})),
                export.Group(G_OTHER, 'db', 'tenant-b', policy.parse_document(
                    {'policies': ['anti-affinity:host']}))),
        servers=(server(1, 'db 1', 'h1', 'tenant-a', G_DB),
                 server(2, 'db', 'h2', 'tenant-a', G_DB),
                 server(3, 'db', 'h1', 'tenant-b', G_OTHER),
                 server(4, 'web', 'h3', 'tenant-a', G_WEB),
                 server(5, 'secret-b', 'h3', 'tenant-b'),
                 server(6, 'gone', 'nowhere', 'tenant-a')),
        stacks=(APP_A, APP_B))
    found.update(changes)
    return export.Cloud(**found)


def test_hosts_keep_placements_inventories():
    """Totals and reserved amounts as Placement holds them, and the
    inventory fields that differ from Placement's defaults: a max_unit
    only where it can refuse an amount (below the capacity)."""
    inventories = {
        'VCPU': export.Inventory(8, 0, 4.0, max_unit=8),
        'MEMORY_MB': export.Inventory(16384, 512, 1.5, max_unit=16384),
        'DISK_GB': export.Inventory(100, 0, 1.0, max_unit=100),
        'CUSTOM_GPU': export.Inventory(4, 0, 1.0, min_unit=2,
                                       step_size=2)}
    (h1, *_) = export.scenario(cloud(hosts=(export.Host(
        'h1', inventories, ('CUSTOM_SSD',)),)))['hosts']
    assert h1['name'] == 'h1'
    assert h1['resources'] == {'CUSTOM_GPU': 4, 'DISK_GB': 100,
                               'MEMORY_MB': 16384, 'VCPU': 8}
    assert h1['reserved'] == {'MEMORY_MB': 512}
    assert h1['inventory'] == {
        'CUSTOM_GPU': {'min_unit': 2, 'step_size': 2},
        # (16384 - 512) x 1.5 = 23808 > 16384: one allocation at most
        'MEMORY_MB': {'allocation_ratio': 1.5, 'max_unit': 16384},
        'VCPU': {'allocation_ratio': 4.0, 'max_unit': 8}}
    assert h1['traits'] == ['CUSTOM_SSD']
    # the simulator reads them back as Placement holds them
    host = sc.parse(dict(export.scenario(cloud()), requests=[])).hosts[0]
    assert (host.capacity('VCPU'), host.capacity('MEMORY_MB')) == (
        32, 23808)


@pytest.mark.parametrize('total,reserved,ratio', [
    (5, 1, 1.5), (3, 1, 1.5), (7, 2, 1.3), (10, 3, 0.7), (4, 4, 2.0),
    (1, 0, 16.0)])
def test_capacity_is_exact(total, reserved, ratio):
    inventory = export.Inventory(total, reserved, ratio)
    modelled, kept = inventory.modelled
    assert modelled - kept == int((total - reserved) * ratio)


def test_a_tree_adds_its_inventories():
    both = export.Inventory(5, 1, 1.5).plus(export.Inventory(4, 0, 2.0))
    assert both.capacity == 6 + 8


def test_names_are_unique_and_stable():
    document = export.scenario(cloud())
    names = [s['name'] for s in document['servers']]
    assert len(names) == len(set(names))
    # white space goes; a name several servers share takes the id
    assert 'db_1' in names
    assert {'db-00000002', 'db-00000003'} <= set(names)
    # a server with no host of the export is left out
    assert not [n for n in names if n.startswith('gone')]
    groups = [g['name'] for g in document['groups']]
    assert sorted(groups) == ['db-11111111', 'db-33333333', 'web']
    # the same names again; and once alone, a name is itself
    assert document == export.scenario(cloud())
    alone = cloud(servers=cloud().servers[1:2])
    assert [s['name'] for s in export.scenario(alone)['servers']] == ['db']


def test_an_admin_export_names_everything():
    document = export.scenario(cloud())
    db = next(g for g in document['groups'] if g['name'] == 'db-11111111')
    assert db['project'] == 'tenant-a'
    assert db['rules'] == {'max_server_per_rack': 2}
    # the targeted zone as tenant-a writes it (obfuscating scope)
    tenant_zone = topo.obfuscate(uuid.UUID(NAMESPACE), 'tenant-a', ZONE)
    assert db['policies'] == ['anti-affinity:rack',
                              f'affinity:zone:{tenant_zone}']
    assert document['scopes']['zone'] == {
        'allow_identifiers': True, 'obfuscate_identifiers': True,
        'namespace': NAMESPACE}
    (app_a, app_b) = document['stacks']
    assert (app_a['name'], app_a['project']) == ('app-a1', 'tenant-a')
    # an existing group of a relationship by the scenario's name
    assert app_a['relationships'][0]['to'] == {'server_group':
                                               'db-11111111'}


def test_the_document_is_a_scenario_the_simulator_reads():
    parsed = sc.parse(json.loads(json.dumps(export.scenario(cloud()))))
    assert {h.name for h in parsed.hosts} == {'h1', 'h2', 'h3'}
    db = parsed.groups['db-11111111']
    # back to the real zone for the same tenant
    assert parsed.topology().to_real(db.document, 'tenant-a').policies[
        1].identifier == ZONE


def test_a_project_export_keeps_the_others_as_load_only():
    document = export.scenario(cloud(), project='tenant-a')
    text = json.dumps(document)
    for secret in ('tenant-b', 'secret-b', G_OTHER, '00000003', '00000005'):
        assert secret not in text
    load = [s for s in document['servers'] if s['name'].startswith('load-')]
    assert [s['name'] for s in load] == ['load-1', 'load-2']
    assert all(set(s) == {'name', 'host', 'flavor'} for s in load)
    # capacity stays true: every server that runs is there
    assert len(document['servers']) == 5
    assert [g['name'] for g in document['groups']] == ['db', 'web']
    assert [s['name'] for s in document['stacks']] == ['app']
    # tenant-a's own server named db is alone now
    assert 'db' in [s['name'] for s in document['servers']]


def test_obfuscation_is_stable_and_names_nothing():
    key = export.Surrogates('k1')
    first = export.scenario(cloud(), surrogates=key)
    again = export.scenario(cloud(), surrogates=export.Surrogates('k1'))
    assert first == again
    other_key = export.scenario(cloud(), surrogates=export.Surrogates('k2'))
    assert first['hosts'] != other_key['hosts']
    text = json.dumps(first)
    for real in ('"h1"', 'rack-1', 'zone-a', 'tenant-a', 'tenant-b',
                 '"web"', 'db_1', 'secret-b', RACK_1, ZONE, NAMESPACE,
                 '"app"', 'fe-a', '"root"'):
        assert real not in text, real
    # policies, rules and scopes are kept
    assert set(first['scopes']) == {'rack', 'zone'}
    assert {tuple(g['policies'])[0] for g in first['groups']} >= {
        'anti-affinity:rack', 'soft-anti-affinity:host'}
    # the host of a server is the surrogate of the host's name
    hosts = {h['name'] for h in first['hosts']}
    assert all(s['host'] in hosts for s in first['servers'])
    assert key.name('host', 'h1') in hosts
    # the obfuscated document is still a scenario, its tenant identifiers
    # consistent with the surrogate uuids and namespace
    parsed = sc.parse(json.loads(text))
    zone = next(a for a in parsed.aggregates if a.metadata.get(
        'policy_scope') == 'zone')
    db = next(g for g in parsed.groups.values()
              if 'anti-affinity:rack' in map(str, g.document.policies))
    real = parsed.topology().to_real(db.document, db.project)
    assert real.policies[1].identifier == zone.uuid


def test_the_load_never_takes_a_name_the_project_gave():
    found = cloud(servers=(server(1, 'load-1', 'h1', 'tenant-a'),
                           server(2, 'x', 'h2', 'tenant-b'),
                           server(3, 'y', 'h3', 'tenant-b')))
    names = [s['name'] for s in export.scenario(found, 'tenant-a')[
        'servers']]
    assert names == ['load-1', 'load-2', 'load-3']


def test_obfuscation_retargets_a_stacks_domains():
    """A stack's targeted domain (the tenant's id of zone-a) is written
    as the tenant writes it in the obfuscated scenario: the simulator
    finds the surrogate zone there, as the stack's tenant targets it."""
    topology = topo.build(
        [topo.scope_from_record(cloud().scopes[1])],
        [topo.Domain(ZONE, 'zone-a', 'zone')])
    tenant_zone = topology.to_tenant(policy.parse_document(
        {'policies': [f'affinity:zone:{ZONE}']}), 'tenant-a').policies[
            0].identifier
    app = export.Stack('a1', 'app', 'tenant-a', {'stack': {
        'name': 'app', 'group': {
            'name': 'root', 'members': [{
                'name': 'fe', 'policies': [f'affinity:zone:{tenant_zone}'],
                'servers': {'names': ['fe-a'],
                            'flavor': {'resources': {'VCPU': 1}}}}]},
        'relationships': []}})
    document = export.scenario(cloud(stacks=(app,)),
                               surrogates=export.Surrogates('k'))
    assert tenant_zone not in json.dumps(document)
    parsed = sc.parse(document)
    (entry,) = parsed.stacks.values()
    written = entry.document['stack']['group']['members'][0]['policies'][0]
    zone = next(a for a in parsed.aggregates
                if a.metadata.get('policy_scope') == 'zone')
    real = parsed.topology().to_real(policy.parse_document(
        {'policies': [written]}), entry.project)
    assert real.policies[0].identifier == zone.uuid
