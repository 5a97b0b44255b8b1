"""The policy store on SQLite (no database server needed).

tests/functional/api/test_store_backends.py runs these tests again on
PostgreSQL and MariaDB."""

import uuid

from alembic import autogenerate
from alembic import migration as alembic_migration
import pytest

from nova_scoped_policies.db import api
from nova_scoped_policies.db import migration
from nova_scoped_policies.db import models
from nova_scoped_policies import policy
from nova_scoped_policies import topology as topo
from tests import db_backends

AGG_1 = '00000000-0000-4000-8000-0000000000a1'
AGG_2 = '00000000-0000-4000-8000-0000000000a2'
GROUP = '00000000-0000-4000-8000-0000000000b1'
NS = '6f72348f-df5d-4e0f-a043-4be92996dbfe'


@pytest.fixture(params=['sqlite'])
def store(request, tmp_path):
    url, drop = db_backends.create(request.param, tmp_path)
    store = api.PolicyStore(url)
    migration.upgrade(store.engine)
    yield store
    store.engine.dispose()
    drop()


def test_migrations_match_the_models(store):
    assert migration.version(store.engine) == migration.head()
    with store.engine.connect() as conn:
        diff = autogenerate.compare_metadata(
            alembic_migration.MigrationContext.configure(conn),
            models.BASE.metadata)
    assert diff == []


def test_a_scratch_schema_is_the_models_without_a_revision():
    store = api.PolicyStore('sqlite://')
    migration.create_scratch(store.engine)
    assert migration.version(store.engine) is None    # never to be kept
    with store.engine.connect() as conn:
        diff = autogenerate.compare_metadata(
            alembic_migration.MigrationContext.configure(conn),
            models.BASE.metadata)
    assert diff == []
    store.create_group(GROUP, 'p', policy.parse_document(
        {'policies': ['anti-affinity:rack']}), check_scopes=False)
    assert store.get_group(GROUP).project_id == 'p'
    store.engine.dispose()


def test_scope_lifecycle(store):
    created = store.create_scope('zone', allow_identifiers=True,
                                 obfuscate_identifiers=True,
                                 obfuscate_namespace_uuid=NS)
    assert created.obfuscate_namespace_uuid == NS
    assert store.get_scope('zone') == store.get_scope(created.uuid)
    store.create_scope('rack')
    assert [s.name for s in store.list_scopes()] == ['rack', 'zone']
    # a namespace is made up when none is given
    assert store.get_scope('rack').obfuscate_namespace_uuid
    updated = store.update_scope('rack', name='rack2',
                                 allow_identifiers=True)
    assert (updated.name, updated.allow_identifiers) == ('rack2', True)
    store.delete_scope('rack2')
    with pytest.raises(api.NotFound, match='policy scope rack2 not found'):
        store.get_scope('rack2')


def test_scope_conflicts(store):
    store.create_scope('rack')
    with pytest.raises(api.Conflict, match='named rack exists'):
        store.create_scope('rack')
    store.create_scope('zone')
    with pytest.raises(api.Conflict, match='named zone exists'):
        store.update_scope('rack', name='zone')
    with pytest.raises(ValueError, match='cannot update uuid'):
        store.update_scope('rack', uuid='x')


def test_aggregates_belong_to_one_scope(store):
    store.create_scope('rack')
    store.create_scope('zone')
    assert list(store.add_aggregate('rack', AGG_1).aggregates) == [AGG_1]
    assert list(store.add_aggregate('rack', AGG_2).aggregates) == [
        AGG_1, AGG_2]
    with pytest.raises(api.Conflict, match=f'{AGG_1} is a domain of scope '
                                           'rack already'):
        store.add_aggregate('zone', AGG_1)
    assert list(store.remove_aggregate('rack', AGG_1).aggregates) == [AGG_2]
    with pytest.raises(api.NotFound, match='is not a domain of scope rack'):
        store.remove_aggregate('rack', AGG_1)
    store.add_aggregate('zone', AGG_1)
    # deleting a scope frees its aggregates
    store.delete_scope('rack')
    store.add_aggregate('zone', AGG_2)
    assert list(store.get_scope('zone').aggregates) == [AGG_1, AGG_2]


def test_group_lifecycle(store):
    doc = policy.parse_document({'policies': ['anti-affinity:rack'],
                                 'rules': {'max_server_per_rack': 2}})
    # a group only on scopes that exist, checked in its own transaction
    with pytest.raises(api.Conflict, match='scope rack does not exist'):
        store.create_group(GROUP, 'tenant-a', doc, name='db')
    store.create_scope('rack')
    saved = store.create_group(GROUP, 'tenant-a', doc, name='db')
    assert saved.document == doc and list(saved.members) == []
    with pytest.raises(api.Conflict, match='has scoped policies already'):
        store.create_group(GROUP, 'tenant-a', doc)
    # another project's group is answered as one that does not exist
    with pytest.raises(api.NotFound) as caught:
        store.create_group(GROUP, 'tenant-b', doc)
    assert str(caught.value) == f'server group {GROUP} not found'
    other = policy.parse_document({'llmn': {'level1': 'rack',
                                            'level2': 'host', 'n': 2},
                                   'rules': {'size': 4}})
    assert store.update_group(GROUP, other).document == other
    assert store.update_group(GROUP, name='db2').document == other
    assert store.get_group(GROUP).name == 'db2'
    assert [g.uuid for g in store.list_groups('tenant-a')] == [GROUP]
    assert store.list_groups('tenant-b') == []
    store.add_member(GROUP, 'i-1')
    assert list(store.add_member(GROUP, 'i-2', max_members=3).members) == [
        'i-1', 'i-2']
    with pytest.raises(api.Conflict, match='member of a server group'):
        store.add_member(GROUP, 'i-1')
    with pytest.raises(api.Conflict, match='2 members, the most allowed'):
        store.add_member(GROUP, 'i-3', max_members=2)
    assert list(store.remove_member(GROUP, 'i-1').members) == ['i-2']
    with pytest.raises(api.NotFound, match='not a member'):
        store.remove_member(GROUP, 'i-1')
    store.delete_group(GROUP)
    with pytest.raises(api.NotFound, match='has no scoped policies'):
        store.get_group(GROUP)
    with pytest.raises(api.NotFound, match='has no scoped policies'):
        store.update_group(GROUP, name='x')


def test_an_instance_is_in_one_group(store):
    doc = policy.parse_document({'policies': ['anti-affinity']})
    other = '00000000-0000-4000-8000-0000000000b2'
    store.create_group(GROUP, 'p', doc)
    store.create_group(other, 'p', doc)
    store.add_member(GROUP, 'i-1')
    # the other group is never named: it may be another project's
    with pytest.raises(api.Conflict) as caught:
        store.add_member(other, 'i-1')
    assert str(caught.value) == ('instance i-1 is a member of a server '
                                 'group already')


def test_members_nova_booted_are_excluded_and_added_back(store):
    doc = policy.parse_document({'policies': ['anti-affinity']})
    store.create_group(GROUP, 'p', doc)
    booted = ['i-nova-1', 'i-nova-2']
    store.add_member(GROUP, 'i-api')
    record = store.remove_member(GROUP, 'i-nova-1', booted=booted)
    assert (record.members, record.excluded) == (('i-api',), ('i-nova-1',))
    assert record.counted(booted) == ('i-api', 'i-nova-2')
    # excluded already, or neither added nor booted: not a member
    for instance in ('i-nova-1', 'i-other'):
        with pytest.raises(api.NotFound, match=f'instance {instance} is '
                                               'not a member'):
            store.remove_member(GROUP, instance, booted=booted)
    # adding it back drops the exclusion, whatever the cap: Nova's own
    # members are not counted against it
    record = store.add_member(GROUP, 'i-nova-1', max_members=1)
    assert (record.members, record.excluded) == (('i-api',), ())
    # a member of Nova's group is one of this group's already
    with pytest.raises(api.Conflict, match=f'i-nova-2 is a member of '
                                           f'server group {GROUP} already'):
        store.add_member(GROUP, 'i-nova-2', booted_in=GROUP)
    # an instance both added and booted leaves both ways at once
    store.remove_member(GROUP, 'i-api', booted=['i-api'])
    assert store.get_group(GROUP).excluded == ('i-api',)
    store.delete_group(GROUP)
    assert store.create_group(GROUP, 'p', doc).excluded == ()


def test_an_instance_nova_booted_into_a_scoped_group_is_in_no_other(store):
    doc = policy.parse_document({'policies': ['anti-affinity']})
    other = '00000000-0000-4000-8000-0000000000b2'
    plain = '00000000-0000-4000-8000-0000000000b3'   # no scoped policies
    store.create_group(GROUP, 'p', doc)
    store.create_group(other, 'q', doc)
    with pytest.raises(api.Conflict) as caught:
        store.add_member(GROUP, 'i-1', booted_in=other.upper())
    # worded as for a member added through the API: never naming the group
    assert str(caught.value) == ('instance i-1 is a member of a server '
                                 'group already')
    assert store.add_member(GROUP, 'i-2', booted_in=plain).members == (
        'i-2',)
    # excluded from the group Nova booted it into, it may join another...
    store.remove_member(other, 'i-1', booted=['i-1'])
    assert store.add_member(GROUP, 'i-1', booted_in=other).members == (
        'i-2', 'i-1')
    # ...and then cannot count in its Nova group again
    with pytest.raises(api.Conflict, match='member of a server group'):
        store.add_member(other, 'i-1')
    assert store.get_group(other).excluded == ('i-1',)
    with pytest.raises(api.NotFound, match='has no scoped policies'):
        store.add_member(plain, 'i-3')


def test_scopes_in_use_cannot_go(store):
    store.create_scope('zone', allow_identifiers=True)
    store.add_aggregate('zone', AGG_1)
    store.add_aggregate('zone', AGG_2)
    store.create_group(GROUP, 'p', policy.parse_document(
        {'policies': [f'affinity:zone:{AGG_1}']}))
    with pytest.raises(api.Conflict, match=f'groups {GROUP} target '
                                           f'aggregate {AGG_1}'):
        store.remove_aggregate('zone', AGG_1)
    with pytest.raises(api.Conflict, match='before disallowing identifiers'):
        store.update_scope('zone', allow_identifiers=False)
    assert store.get_scope('zone').allow_identifiers
    store.remove_aggregate('zone', AGG_2)
    with pytest.raises(api.Conflict, match=f'used by server groups {GROUP}'):
        store.delete_scope('zone')
    store.delete_group(GROUP)
    store.delete_scope('zone')


def test_topology_from_the_store(store):
    store.create_scope('zone', allow_identifiers=True,
                       obfuscate_identifiers=True,
                       obfuscate_namespace_uuid=NS)
    store.add_aggregate('zone', AGG_1)
    store.add_aggregate('zone', AGG_2)
    topology = store.topology([topo.AggregateInfo(
        AGG_1, 'zone-a', ['h1', 'h2'])])
    assert topology.domains_of('zone', 'h1') == (AGG_1,)
    assert topology.problems == [f'scope zone: aggregate {AGG_2} does not '
                                 'exist']
    mine = topo.obfuscate(uuid.UUID(NS), 'tenant-a', AGG_1)
    assert topology.resolve_identifier('zone', mine, 'tenant-a') == AGG_1


def test_uuids_are_stored_and_matched_in_canonical_form(store):
    upper = AGG_1.upper()
    created = store.create_scope('zone', uuid=NS.upper(), aggregates=[upper])
    assert (created.uuid, list(created.aggregates)) == (NS, [AGG_1])
    assert store.get_scope(NS.upper()).uuid == NS
    with pytest.raises(api.Conflict):
        store.add_aggregate('zone', AGG_1.replace('-', ''))
    store.add_aggregate('zone', AGG_2.upper())
    store.remove_aggregate('zone', AGG_2)
    store.remove_aggregate(NS, upper)
    assert list(store.get_scope('zone').aggregates) == []
    doc = policy.parse_document({'policies': ['anti-affinity']})
    assert store.create_group(GROUP.upper(), 'p', doc).uuid == GROUP
    assert store.get_group(GROUP.upper()).uuid == GROUP
    member = '00000000-0000-4000-8000-0000000000c1'
    assert list(store.add_member(GROUP, member.upper()).members) == [member]
    with pytest.raises(api.Conflict, match='member of a server group'):
        store.add_member(GROUP.upper(), member)
    assert list(store.remove_member(GROUP, member.upper()).members) == []
    # a value that is no uuid is looked up as given, and simply misses
    with pytest.raises(api.NotFound):
        store.get_group('not-a-uuid')
