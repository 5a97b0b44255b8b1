"""Every rule of ``api/policies/`` against every persona, as Nova's
``tests/unit/policies`` test its rules, through the real API (noauth2
headers, a SQLite store, the fake Placement): the project's admin,
manager, member and reader, another project's member, the service
(nova-scheduler's user) and a token of the project with no role.

Each persona is allowed or refused; a refusal is a 403 naming the rule,
or the 404 of a resource that does not exist for a caller of another
project who may not see it; and a refusal writes nothing: the store's
tables and Placement's consumers are as they were.
"""

import dataclasses
import json
import typing
import uuid

import pytest
import sqlalchemy as sa
import webob

from nova_scoped_policies.api.policies import export as export_rules
from nova_scoped_policies.api.policies import groups as group_rules
from nova_scoped_policies.api.policies import repairs as repair_rules
from nova_scoped_policies.api.policies import scopes as scope_rules
from nova_scoped_policies.api.policies import stacks as stack_rules
from nova_scoped_policies.api import policies
from nova_scoped_policies.db import models
from nova_scoped_policies.db import repair_tasks as task_db
from tests.functional.api import fixtures as fx

A = fx.PROJECTS['PROJECT_A']
B = fx.PROJECTS['PROJECT_B']


def _who(project, roles, user):
    return {'X-Project-Id': project, 'X-Roles': roles, 'X-User-Id': user}


# the roles a Keystone token carries (implied roles included)
PERSONAS = {
    'admin': _who(fx.PROJECTS['ADMIN_PROJECT'],
                  'admin,manager,member,reader', 'admin'),
    'manager': _who(A, 'manager,member,reader', 'manager'),
    'member': _who(A, 'member,reader', 'member'),
    'reader': _who(A, 'reader', 'reader'),
    'other_member': _who(B, 'member,reader', 'other'),
    'service': _who('service', 'service', 'nova'),
    'no_role': _who(A, '', 'nobody'),
}
MEMBER_A = PERSONAS['member']
ADMIN = PERSONAS['admin']
STACK = {'stack': {'name': 'app', 'lease_seconds': 600, 'group': {
    'name': 'web', 'policies': ['anti-affinity:host'],
    'servers': {'count': 1, 'flavor': {'resources': {'VCPU': 1}}}}}}

OK, FORBIDDEN, HIDDEN = 'ok', 403, 404
_ALL = set(PERSONAS)


def expect(allowed, hidden=()) -> typing.Dict[str, object]:
    """persona -> OK, or the refusal: 404 for ``hidden``, else 403."""
    return {p: OK if p in allowed else HIDDEN if p in hidden else FORBIDDEN
            for p in PERSONAS}


ADMIN_ONLY = expect({'admin'})
ADMIN_OR_SERVICE = expect({'admin', 'service'})
READ = expect({'admin', 'manager', 'member', 'reader'},
              hidden={'other_member'})
READ_OR_SERVICE = expect({'admin', 'manager', 'member', 'reader',
                          'service'}, hidden={'other_member'})
WRITE = expect({'admin', 'manager', 'member'}, hidden={'other_member'})
LIST = expect({'admin', 'manager', 'member', 'reader', 'other_member'})
LIST_OR_SERVICE = expect(_ALL - {'no_role'})


class API:
    """One policy API for the module's cases."""

    def __init__(self, fixture: fx.APIFixture) -> None:
        self.fixture = fixture

    def call(self, method, path, body=None, headers=MEMBER_A,
             version='1.5'):
        req = webob.Request.blank(path, method=method, headers=dict(
            headers,
            **{'OpenStack-API-Version': f'scoped-policies {version}'}))
        if body is not None:
            req.content_type = 'application/json'
            req.body = json.dumps(body).encode()
        resp = req.get_response(fx._APP)
        return resp.status_code, (resp.json if resp.body else None)

    def ok(self, method, path, body=None, headers=ADMIN):
        status, found = self.call(method, path, body, headers)
        assert status < 300, (method, path, status, found)
        return found

    def group(self, project=A) -> str:
        uid = str(uuid.uuid4())
        self.ok('POST', '/os-server-groups', {'server_group': {
            'id': uid, 'project_id': project,
            'policies': ['anti-affinity:host']}})
        return uid

    def member_of(self, group) -> str:
        """A new instance (no allocations yet) in ``group``."""
        instance = str(uuid.uuid4())
        self.ok('POST', f'/os-server-groups/{group}/action',
                {'add_instance': {'instance_id': instance}})
        return instance

    def stack(self) -> str:
        return self.ok('POST', '/stacks', STACK, MEMBER_A)['stack']['id']

    def scope(self, aggregate=None) -> str:
        """A new scope (its one domain ``aggregate``, none by default)."""
        name = f'rack-{uuid.uuid4().hex[:8]}'
        self.ok('POST', '/os-policy-scopes', {'policy_scope': {
            'name': name, 'aggregates': [aggregate] if aggregate else []}})
        return name

    def task(self, project=A) -> str:
        tasks = task_db.TaskStore(self.fixture.store)
        return tasks.create(project, 'server_group x', [
            {'server': str(uuid.uuid4()), 'from': 'h1', 'to': 'h2'}]).id

    def snapshot(self):
        """Every row of the store, and Placement's consumers."""
        rows = {}
        with self.fixture.store.engine.connect() as connection:
            for table in models.BASE.metadata.sorted_tables:
                rows[table.name] = sorted(
                    repr(tuple(r)) for r in connection.execute(
                        sa.select(table)))
        model = self.fixture.placement.app.model
        consumers = {c: dataclasses.asdict(v)
                     for c, v in model.consumers.items()}
        return rows, consumers


@dataclasses.dataclass
class Case:
    """One rule's request, made on fresh resources by ``setup``."""

    rule: str
    setup: typing.Callable[[API], tuple]
    expected: typing.Dict[str, object]
    also: typing.FrozenSet[int] = frozenset()
    """Statuses past the policy that mean allowed (501 of an apply
    without Nova)."""
    first: typing.Optional[str] = None
    """The rule the API checks first (listing before listing every
    project's): a 403 may name it."""


def _g(path, body=None, method='POST'):
    """A request on a new group of project A."""
    def setup(api):
        group = api.group()
        return method, path.format(group=group), body
    return setup


def _member(action):
    def setup(api):
        group = api.group()
        instance = api.member_of(group) if action == 'remove_instance' \
            else str(uuid.uuid4())
        return 'POST', f'/os-server-groups/{group}/action', {
            action: {'instance_id': instance}}
    return setup


def _s(method, path, body=None):
    """A request on a new stack decision of project A."""
    def setup(api):
        stack = api.stack()
        return method, path.format(stack=stack), body
    return setup


def _sc(method, path, body=None):
    """A request on a new scope."""
    def setup(api):
        return method, path.format(scope=api.scope()), body
    return setup


def _remove_aggregate(api):
    aggregate = str(uuid.uuid4())
    return 'POST', f'/os-policy-scopes/{api.scope(aggregate)}/action', {
        'remove_aggregate': {'aggregate': aggregate}}


def _t(method):
    def setup(api):
        return method, f'/repairs/tasks/{api.task()}', None
    return setup


def _fixed(method, path, body=None):
    return lambda api: (method, path, body)


def _new_group(api):
    return 'POST', '/os-server-groups', {'server_group': {
        'id': str(uuid.uuid4()), 'project_id': A,
        'policies': ['anti-affinity:host']}}


def _plan(api):
    return 'POST', '/repairs', {'repair': {'server_group': api.group()}}


def _apply(api):
    return 'POST', '/repairs/apply', {'repair': {
        'server_group': api.group(), 'fingerprint': 'f' * 64, 'moves': [
            {'server': str(uuid.uuid4()), 'from': 'h1', 'to': 'h2'}]}}


_RENAMED = {'name': 'renamed'}
CASES = [
    Case(scope_rules.LIST, _fixed('GET', '/os-policy-scopes'),
         LIST_OR_SERVICE),
    Case(scope_rules.SHOW, _sc('GET', '/os-policy-scopes/{scope}'),
         LIST_OR_SERVICE),
    Case(scope_rules.CREATE, lambda api: ('POST', '/os-policy-scopes', {
        'policy_scope': {'name': f'zone-{uuid.uuid4().hex[:8]}'}}),
        ADMIN_ONLY),
    Case(scope_rules.UPDATE, _sc('PUT', '/os-policy-scopes/{scope}', {
        'policy_scope': {'allow_identifiers': True}}), ADMIN_ONLY),
    Case(scope_rules.DELETE, _sc('DELETE', '/os-policy-scopes/{scope}'),
         ADMIN_ONLY),
    Case(scope_rules.ADD_AGGREGATE, _sc(
        'POST', '/os-policy-scopes/{scope}/action',
        {'add_aggregate': {'aggregate': fx.AGGREGATES['RACK_B']}}),
        ADMIN_ONLY),
    Case(scope_rules.REMOVE_AGGREGATE, _remove_aggregate, ADMIN_ONLY),
    Case(scope_rules.REAL_IDS, _fixed(
        'GET', f'/os-policy-scopes?as_tenant_id={A}'), ADMIN_OR_SERVICE,
        first=scope_rules.LIST),
    Case(group_rules.LIST, _fixed('GET', '/os-server-groups'),
         LIST_OR_SERVICE),
    Case(group_rules.LIST_ALL, _fixed(
        'GET', '/os-server-groups?all_projects=true'), ADMIN_OR_SERVICE,
        first=group_rules.LIST),
    Case(group_rules.SHOW, _g('/os-server-groups/{group}', method='GET'),
         READ_OR_SERVICE),
    Case(group_rules.CREATE, _new_group,
         expect({'admin', 'manager', 'member'})),
    Case(group_rules.UPDATE, _g('/os-server-groups/{group}',
                                {'server_group': _RENAMED}), WRITE),
    Case(group_rules.DELETE, _g('/os-server-groups/{group}',
                                method='DELETE'), WRITE),
    Case(group_rules.ADD_INSTANCE, _member('add_instance'), WRITE),
    Case(group_rules.REMOVE_INSTANCE, _member('remove_instance'), WRITE),
    Case(group_rules.AUDIT, _g('/os-server-groups/{group}/audit',
                               method='GET'), READ),
    Case(stack_rules.LIST, _fixed('GET', '/stacks'), LIST),
    Case(stack_rules.LIST_ALL, _fixed('GET', '/stacks?all_projects=true'),
         ADMIN_ONLY, first=stack_rules.LIST),
    Case(stack_rules.SHOW, _s('GET', '/stacks/{stack}'), READ_OR_SERVICE),
    # another project's member decides in its own project
    Case(stack_rules.CREATE, _fixed('POST', '/stacks', STACK),
         expect({'admin', 'manager', 'member', 'other_member'})),
    Case(stack_rules.RENEW, _s('POST', '/stacks/{stack}/action',
                               {'renew': {'lease_seconds': 900}}), WRITE),
    Case(stack_rules.CONFIRM, _s('POST', '/stacks/{stack}/action',
                                 {'confirm': None}), WRITE),
    Case(stack_rules.BOOT_MEMBER, _s(
        'POST', '/stacks/{stack}/action',
        {'boot_member': {'name': 'web-1'}}),
        expect({'admin', 'manager', 'member', 'service'},
               hidden={'other_member'})),
    Case(stack_rules.AUDIT, _s('GET', '/stacks/{stack}/audit'), READ),
    Case(stack_rules.DELETE, _s('DELETE', '/stacks/{stack}'), WRITE),
    Case(repair_rules.PLAN, _plan, WRITE),
    Case(repair_rules.PLAN_ALL, _fixed('POST', '/repairs', {'repair': {}}),
         ADMIN_ONLY),
    Case(repair_rules.APPLY, _apply, ADMIN_ONLY, also=frozenset({501})),
    Case(repair_rules.TASKS_LIST, _fixed('GET', '/repairs/tasks'), LIST),
    Case(repair_rules.TASKS_SHOW, _t('GET'), READ),
    Case(repair_rules.TASKS_CANCEL, _t('DELETE'), ADMIN_ONLY),
    Case(export_rules.EXPORT, _fixed('GET', '/export'), ADMIN_ONLY),
]
_DOCUMENTED = {r.name for r in policies.list_rules()
               if r.name.startswith('scoped_policies:')}


def test_every_rule_is_in_the_matrix():
    assert {c.rule for c in CASES} == _DOCUMENTED


def test_every_rule_is_project_scoped():
    assert all(r.scope_types == ['project'] for r in policies.list_rules())


@pytest.fixture(scope='module')
def api():
    fixture = fx.APIFixture()
    fixture.start_fixture()
    yield API(fixture)
    fixture.stop_fixture()


@pytest.mark.parametrize('case', CASES, ids=lambda c: c.rule.split(
    'scoped_policies:')[1])
@pytest.mark.parametrize('persona', sorted(PERSONAS))
def test_persona(api, case, persona):
    method, path, body = case.setup(api)
    before = api.snapshot()
    status, found = api.call(method, path, body, PERSONAS[persona])
    wanted = case.expected[persona]
    if wanted == OK:
        assert status < 400 or status in case.also, (status, found)
        return
    assert status == wanted, (status, found)
    if wanted == FORBIDDEN:
        assert found['errors'][0]['detail'] in {
            f'Policy does not allow {rule} to be performed.'
            for rule in (case.rule, case.first)}, found
    assert api.snapshot() == before, 'a refused request wrote'


def test_a_refused_decision_holds_nothing_in_placement(api):
    before = api.snapshot()
    status, _ = api.call('POST', '/stacks', STACK, PERSONAS['reader'])
    assert status == 403
    assert api.snapshot() == before
    # the member's decision holds, as before
    status, found = api.call('POST', '/stacks', STACK, MEMBER_A)
    assert status == 201, found
    assert api.snapshot()[1] != before[1]


def test_a_system_scoped_token_is_refused(api):
    headers = dict(ADMIN, **{'OpenStack-System-Scope': 'all'})
    status, found = api.call('GET', '/os-policy-scopes', headers=headers)
    assert status == 403, found


def test_a_readers_repair_task_shows_hosts_as_surrogates(api):
    task = api.task()
    status, found = api.call('GET', f'/repairs/tasks/{task}',
                             headers=PERSONAS['reader'])
    assert status == 200, found
    (move,) = found['task']['moves']
    assert {move['from'], move['to']} & {'h1', 'h2'} == set()
    status, found = api.call('GET', f'/repairs/tasks/{task}', headers=ADMIN)
    assert found['task']['moves'][0]['from'] == 'h1'
    # the reader lists its project's tasks only; another project sees none
    listed = api.call('GET', '/repairs/tasks', headers=PERSONAS['reader'])[1]
    assert task in [t['id'] for t in listed['tasks']]
    other = api.call('GET', '/repairs/tasks',
                     headers=PERSONAS['other_member'])[1]
    assert task not in [t['id'] for t in other['tasks']]
