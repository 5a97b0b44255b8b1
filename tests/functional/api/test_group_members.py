"""Group membership covers the members Nova booted, and no project learns
of another's groups.

The world of ``fixtures.py`` (Placement: I1 and I2 in rack A, I3 in rack
B; all of project A) with a Nova that booted I1 and I2 into group 1 (A's)
and I3 into group 2 (B's). ``remove_instance`` of a member Nova booted
excludes it from the group's scoped policies; ``add_instance`` of it
counts it again; an instance Nova booted into another group with scoped
policies joins no other, and the conflict never names that group.
"""

import dataclasses
import json
import typing

import pytest
from wsgi_intercept import interceptor

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.scheduler.stores import http
from nova_scoped_policies.scheduler.stores import sql
from tests.functional.api import fixtures as fx
from tests.functional.api import test_stores as ts
from tests.functional.api import test_visibility as tv

G1, G2, G3 = (fx.GROUPS[g] for g in ('GROUP_1', 'GROUP_2', 'GROUP_3'))
I1, I2, I3, I4 = (fx.INSTANCES[i][0] for i in ('I1', 'I2', 'I3', 'I4'))
NOWHERE = '00000000-0000-4000-8000-000000000999'
"""A server group neither Nova nor the store has."""


class FakeNova:
    """What the service asks Nova (:class:`api.nova.NovaGroups`), from
    ``groups``: group uuid -> (project, members); every instance is
    project A's."""

    def __init__(self, groups: typing.Dict[str, typing.Tuple[str, list]]):
        self.groups = groups

    def group(self, uuid):
        if uuid not in self.groups:
            return None
        project, members = self.groups[uuid]
        return {'id': uuid, 'project_id': project, 'members': list(members)}

    def members(self, uuid):
        return list(self.groups.get(uuid, (None, []))[1])

    def server_project(self, uuid):
        return fx.PROJECTS['PROJECT_A'] if uuid in (I1, I2, I3, I4) else None

    def aggregate_hosts(self):
        return {fx.AGGREGATES[agg]: frozenset(
            h for h, aggs in fx.HOSTS.items() if agg in aggs)
            for agg in fx.AGGREGATES}

    def server_group(self, uuid):
        return next((g for g, (_, members) in self.groups.items()
                     if uuid in members), None)


@dataclasses.dataclass
class World:
    call: tv.Client
    store: store_api.PolicyStore
    nova: typing.Optional[FakeNova] = None

    def __call__(self, method, path, headers, body=None):
        status, text = self.call(method, path, headers, body)
        return status, json.loads(text) if text else None

    def group(self, uuid, headers=tv.A, policies=('anti-affinity:rack',)):
        status, body = self('POST', '/os-server-groups', headers, {
            'server_group': {'id': uuid, 'policies': list(policies)}})
        assert status == 200, body

    def action(self, uuid, action, instance, headers=tv.A):
        return self('POST', f'/os-server-groups/{uuid}/action', headers,
                    {action: {'instance_id': instance}})

    def audit(self, uuid):
        status, body = self('GET', f'/os-server-groups/{uuid}/audit', tv.A)
        assert status == 200, body
        return body['server_group_policy_audit']


def _world(tmp_path, with_nova: bool):
    """A fresh world; the service asks Nova when ``with_nova``."""
    nova = None
    if with_nova:
        nova = FakeNova({G1: (fx.PROJECTS['PROJECT_A'], [I1, I2]),
                         G2: (fx.PROJECTS['PROJECT_B'], [I3]),
                         G3: (fx.PROJECTS['PROJECT_A'], [])})
    app, store, placement = fx.fresh_app(tmp_path, nova=nova)
    world = World(tv.Client(app), store, nova)
    assert world('POST', '/os-policy-scopes', tv.ADMIN, {'policy_scope': {
        'name': 'rack', 'aggregates': [fx.AGGREGATES['RACK_A'],
                                       fx.AGGREGATES['RACK_B']]}})[0] == 201
    yield world
    store.engine.dispose()
    placement.cleanUp()


@pytest.fixture
def with_nova(tmp_path):
    yield from _world(tmp_path, True)


@pytest.fixture
def without_nova(tmp_path):
    yield from _world(tmp_path, False)


@pytest.fixture(params=[True, False], ids=['nova', 'no-nova'])
def world(request, tmp_path):
    yield from _world(tmp_path, request.param)


def test_a_member_nova_booted_is_excluded_then_added_back(with_nova):
    world = with_nova
    world.group(G1)
    audit = world.audit(G1)
    assert [m['instance_id'] for m in audit['members']] == [I1, I2]
    assert audit['violations'][0].startswith('anti-affinity:rack:')

    status, body = world.action(G1, 'remove_instance', I2)
    assert status == 200, body
    assert body['server_group']['members'] == []
    assert body['server_group']['excluded_members'] == [I2]
    audit = world.audit(G1)
    assert [m['instance_id'] for m in audit['members']] == [I1]
    assert audit['violations'] == []
    # the scheduler's drivers read the exclusion
    assert world.store.get_group(G1).excluded == (I2,)

    # removed already, or never a member: 404 naming the field
    for instance in (I2, I4):
        status, body = world.action(G1, 'remove_instance', instance)
        assert status == 404
        assert body['errors'][0]['detail'] == (
            f'remove_instance.instance_id: instance {instance} is not a '
            f'member of server group {G1}')

    # an instance of Nova's group is a member already
    status, body = world.action(G1, 'add_instance', I1)
    assert status == 409
    assert body['errors'][0]['detail'] == (
        f'instance {I1} is a member of server group {G1} already')

    status, body = world.action(G1, 'add_instance', I2)
    assert status == 200, body
    assert body['server_group']['excluded_members'] == []
    assert body['server_group']['members'] == []
    audit = world.audit(G1)
    assert [m['instance_id'] for m in audit['members']] == [I1, I2]


def test_only_the_owner_and_admins_see_the_excluded_members(with_nova):
    world = with_nova
    world.group(G1)
    assert world.action(G1, 'remove_instance', I2, tv.B)[0] == 404
    assert world.action(G1, 'remove_instance', I2)[0] == 200
    for headers in (tv.A, tv.ADMIN):
        status, body = world('GET', f'/os-server-groups/{G1}', headers)
        assert body['server_group']['excluded_members'] == [I2]
    status, body = world('GET', f'/os-server-groups/{G1}', tv.B)
    assert status == 404 and I2 not in json.dumps(body)
    status, body = world('GET', '/os-server-groups', tv.B)
    assert body == {'server_groups': []}


def test_drivers_read_the_excluded_members(with_nova):
    world = with_nova
    world.group(G1)
    world.action(G1, 'remove_instance', I2)
    intercept = interceptor.RequestsInterceptor(lambda: world.call.app,
                                                url=ts.URL)
    intercept.install_intercept()
    try:
        read = http.HttpStore(None, ts._adapter(tv.ADMIN)).group(G1)
    finally:
        intercept.uninstall_intercept()

    class Conf:
        class policy_store:
            connection = str(world.store.engine.url)
            connect_timeout = 5
            max_retries = 1
    stored = sql.SqlStore(Conf).group(G1)
    assert (read.members, read.excluded) == ((), (I2,))
    assert (stored.members, stored.excluded) == ((), (I2,))


def test_an_instance_nova_booted_into_a_scoped_group_joins_no_other(
        with_nova):
    """I3 is in group 2 of project B; I4 in group 3 of project A: both
    refusals read alike, naming neither group."""
    world = with_nova
    world.group(G1)
    world.group(G2, tv.B)
    world.group(G3)
    world.nova.groups[G3][1].append(I4)
    answers = {}
    for instance in (I3, I4):
        status, body = world.action(G1, 'add_instance', instance)
        assert status == 409
        answers[instance] = body['errors'][0]['detail']
        assert G2 not in answers[instance] and G3 not in answers[instance]
    assert answers == {i: f'instance {i} is a member of a server group '
                       'already' for i in (I3, I4)}
    # the owner of group 2 takes I3 out of its scoped policies: it may join
    assert world.action(G2, 'remove_instance', I3, tv.B)[0] == 200
    status, body = world.action(G1, 'add_instance', I3)
    assert status == 200, body
    assert body['server_group']['members'] == [I3]
    # and cannot count in group 2 again while it is group 1's
    status, body = world.action(G2, 'add_instance', I3, tv.B)
    assert (status, body['errors'][0]['detail']) == (
        409, f'instance {I3} is a member of a server group already')


def test_without_nova_only_members_added_here_can_be_removed(
        without_nova):
    world = without_nova
    world.group(G1)
    status, body = world.action(G1, 'remove_instance', I1)
    assert (status, body['errors'][0]['detail']) == (
        404, f'remove_instance.instance_id: instance {I1} is not a member '
        f'of server group {G1}')
    assert world.action(G1, 'add_instance', I1)[0] == 200
    status, body = world.action(G1, 'remove_instance', I1)
    assert status == 200 and body['server_group']['excluded_members'] == []


CROSS_TENANT = [
    ('GET', '/os-server-groups/{id}', None),
    ('POST', '/os-server-groups/{id}', {'server_group': {'name': 'x'}}),
    ('GET', '/os-server-groups/{id}/audit', None),
    ('POST', '/os-server-groups/{id}/action',
     {'add_instance': {'instance_id': I4}}),
    ('POST', '/os-server-groups/{id}/action',
     {'remove_instance': {'instance_id': I1}}),
    ('DELETE', '/os-server-groups/{id}', None),
    ('POST', '/os-server-groups',
     {'server_group': {'id': '{id}', 'policies': ['anti-affinity']}}),
]


def _asked(world, method, path, body, group):
    """B's answer about ``group``: status and error, the id as ``{id}``."""
    def fill(value):
        return json.loads(json.dumps(value).replace('{id}', group))
    status, answer = world(method, path.replace('{id}', group), tv.B,
                           fill(body) if body is not None else None)
    if status >= 400:
        answer = [(e['status'], e['title'], e['detail'])
                  for e in answer['errors']]
    return status, json.dumps(answer).replace(group, '{id}')


@pytest.mark.parametrize('method, path, body', CROSS_TENANT)
def test_another_projects_group_is_answered_as_none(world, method, path,
                                                    body):
    """Project B asks about group 1 (A's, with scoped policies and, with
    [nova], Nova's group of A): the same answer as for a group that does
    not exist, except creating for a fresh id without [nova], which
    succeeds; B then gets what it gets when Nova says the group is not
    B's."""
    world.group(G1)
    status, answer = _asked(world, method, path, body, G1)
    assert status == 404, answer
    if path == '/os-server-groups':
        assert json.loads(answer)[0][2] == 'server group {id} not found'
    if world.nova is not None or path != '/os-server-groups':
        assert (status, answer) == _asked(world, method, path, body,
                                          NOWHERE)
    # nothing changed for A
    status, shown = world('GET', f'/os-server-groups/{G1}', tv.A)
    assert shown['server_group']['name'] is None
