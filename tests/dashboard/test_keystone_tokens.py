"""The policy API behind keystonemiddleware, with real Keystone 30 tokens
(conftest.py: Keystone on SQLite, and serve.py: the policy API, a real
Placement).

A user with only the ``reader`` role of a project lists and reads its
groups, stacks, audits, scopes and repair tasks; every write answers 403
naming its rule, and the policy store and Placement are as they were.
The project's member writes. nova-scheduler's user, with only the
``service`` role (as devstack gives it), reads what the ``http`` store
driver reads and gives a stack member's hold back; it writes nothing
else. A system-scoped token is refused (the rules are project-scoped).
"""

import secrets
import uuid

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
import pytest

from nova_scoped_policies import client as api_client
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.scheduler.stores import http
from tests.dashboard import conftest
from tests.dashboard import test_browser

GROUP = str(uuid.uuid4())
STACK = {'stack': {'name': 'tokens', 'lease_seconds': 600, 'group': {
    'name': 'web', 'policies': ['anti-affinity:host'],
    'servers': {'count': 2, 'flavor': {'resources': {'VCPU': 1}}}}}}
SCHEDULER = {'project': 'service', 'user': 'scheduler',
             'password': 'scheduler-' + secrets.token_hex(6)}


def session(keystone, user, password, project=None, system=False):
    """A keystoneauth1 session of ``user``, scoped to ``project`` (or to
    the system)."""
    scope = {'system_scope': 'all'} if system else {
        'project_name': project or conftest.TENANT['project'],
        'project_domain_id': 'default'}
    return ks_session.Session(auth=v3.Password(
        auth_url=f'{keystone}/v3', username=user, password=password,
        user_domain_id='default', **scope))


def client(sess) -> api_client.Client:
    """The policy API, found in Keystone's catalog."""
    return api_client.Client(sess, interface='public')


def refused(call, *args):
    with pytest.raises(api_client.APIError) as caught:
        call(*args)
    return caught.value


@pytest.fixture(scope='module')
def world(keystone, cloud):
    """The tenant's group with a member and its stack decision (made with
    the member's token), and the sessions of each persona."""
    identity = conftest.Identity(keystone)
    identity.tenant(SCHEDULER['project'], SCHEDULER['user'],
                    SCHEDULER['password'], role='service')
    member = client(session(keystone, conftest.TENANT['user'],
                            conftest.TENANT['password']))
    member.request('POST', '/os-server-groups', {'server_group': {
        'id': GROUP, 'policies': ['anti-affinity:rack']}})
    instance = str(uuid.uuid4())
    test_browser.place(cloud, instance, 'h6', cloud['tenant'])
    member.request('POST', f'/os-server-groups/{GROUP}/action',
                   {'add_instance': {'instance_id': instance}})
    stack = member.request('POST', '/stacks', STACK)['stack']
    return {
        'member': member, 'instance': instance, 'stack': stack['id'],
        'admin': client(identity.session),
        'reader': client(session(keystone, conftest.READER['user'],
                                 conftest.READER['password'])),
        'scheduler': session(keystone, SCHEDULER['user'],
                             SCHEDULER['password'], SCHEDULER['project']),
        'placement': pc.PlacementClient.for_endpoint(cloud['placement'],
                                                     'admin', '1.38'),
    }


def state(world):
    """Everything a write could change: the store as the administrator
    lists it, and every allocation in Placement."""
    admin, placement = world['admin'], world['placement']
    stored = [admin.request('GET', path) for path in (
        '/os-server-groups?all_projects=true', '/stacks?all_projects=true',
        '/os-policy-scopes', '/repairs/tasks')]
    allocations = {rp['uuid']: placement.request(
        'GET', f'/resource_providers/{rp["uuid"]}/allocations').json()
        for rp in placement.list_providers()}
    return stored, allocations


def test_a_readers_token_reads(world):
    reader = world['reader']
    listed = reader.request('GET', '/os-server-groups')['server_groups']
    assert GROUP in [g['id'] for g in listed]
    assert reader.request('GET', f'/os-server-groups/{GROUP}')[
        'server_group']['members'] == [world['instance']]
    assert 'violations' in reader.request(
        'GET', f'/os-server-groups/{GROUP}/audit')[
            'server_group_policy_audit']
    stacks = reader.request('GET', '/stacks')['stacks']
    assert world['stack'] in [s['id'] for s in stacks]
    stack = reader.request('GET', f'/stacks/{world["stack"]}')['stack']
    assert {s['state'] for s in stack['servers'].values()} == {'held'}
    assert reader.request('GET', f'/stacks/{world["stack"]}/audit')[
        'stack_audit']['status'] == 'ok'
    assert 'rack' in [s['name'] for s in reader.request(
        'GET', '/os-policy-scopes')['policy_scopes']]
    assert reader.request('GET', '/os-policy-scopes/rack')[
        'policy_scope']['name'] == 'rack'
    assert reader.request('GET', '/repairs/tasks') == {'tasks': []}


def _writes(world):
    """(rule, method, path, body) of every write, each on the tenant's
    resources."""
    stack, group = world['stack'], f'/os-server-groups/{GROUP}'
    action = f'/stacks/{stack}/action'
    scope = '/os-policy-scopes/rack'
    aggregate = str(uuid.uuid4())
    return [
        ('server_groups:create', 'POST', '/os-server-groups',
         {'server_group': {'id': str(uuid.uuid4()),
                           'policies': ['anti-affinity:host']}}),
        ('server_groups:update', 'POST', group,
         {'server_group': {'name': 'renamed'}}),
        ('server_groups:add_instance', 'POST', group + '/action',
         {'add_instance': {'instance_id': str(uuid.uuid4())}}),
        ('server_groups:remove_instance', 'POST', group + '/action',
         {'remove_instance': {'instance_id': world['instance']}}),
        ('server_groups:delete', 'DELETE', group, None),
        ('stacks:create', 'POST', '/stacks', STACK),
        ('stacks:renew', 'POST', action, {'renew': None}),
        ('stacks:confirm', 'POST', action, {'confirm': None}),
        ('stacks:boot_member', 'POST', action,
         {'boot_member': {'name': 'web-1'}}),
        ('stacks:delete', 'DELETE', f'/stacks/{stack}', None),
        ('repairs:plan', 'POST', '/repairs',
         {'repair': {'server_group': GROUP}}),
        ('repairs:apply', 'POST', '/repairs/apply', {'repair': {
            'server_group': GROUP, 'fingerprint': '0' * 64,
            'moves': [{'server': world['instance'], 'from': 'h1',
                       'to': 'h3'}]}}),
        ('repairs:tasks:cancel', 'DELETE',
         f'/repairs/tasks/{uuid.uuid4()}', None),
        ('scopes:create', 'POST', '/os-policy-scopes',
         {'policy_scope': {'name': 'zone'}}),
        ('scopes:update', 'PUT', scope,
         {'policy_scope': {'allow_identifiers': False}}),
        ('scopes:add_aggregate', 'POST', scope + '/action',
         {'add_aggregate': {'aggregate': aggregate}}),
        ('scopes:remove_aggregate', 'POST', scope + '/action',
         {'remove_aggregate': {'aggregate': aggregate}}),
        ('scopes:delete', 'DELETE', scope, None),
    ]


def test_every_write_of_a_reader_is_403_and_changes_nothing(world):
    before = state(world)
    for rule, method, path, body in _writes(world):
        error = refused(world['reader'].request, method, path, body)
        assert (error.status, error.detail) == (
            403, f'Policy does not allow scoped_policies:{rule} to be '
            'performed.'), (method, path)
    assert state(world) == before


def test_the_members_token_writes(world):
    member = world['member']
    renamed = member.request('POST', f'/os-server-groups/{GROUP}', {
        'server_group': {'name': 'db'}})['server_group']
    assert renamed['name'] == 'db'
    renewed = member.request('POST', f'/stacks/{world["stack"]}/action',
                             {'renew': None})['stack']
    assert renewed['status'] == 'reserved'
    # an administrator's rule stays an administrator's
    assert refused(member.request, 'POST', '/os-policy-scopes', {
        'policy_scope': {'name': 'zone'}}).status == 403


def test_the_schedulers_service_role_reads_what_the_driver_reads(world):
    adapter = ks_adapter.Adapter(world['scheduler'],
                                 service_type='scoped-policies',
                                 interface='public')
    driver = http.HttpStore(None, adapter)
    rack, = (s for s in driver.scopes() if s.name == 'rack')
    assert rack.obfuscate_namespace_uuid     # real identifiers
    assert GROUP in [g.uuid for g in driver.groups()]
    assert driver.group(GROUP).project_id == world['member'].request(
        'GET', f'/os-server-groups/{GROUP}')['server_group']['project_id']
    plan = driver.stack_plan(world['stack'])
    assert {s.host for s in plan.servers.values()} <= {
        f'h{n}' for n in range(1, 7)}     # real host names
    driver.boot_member(world['stack'], 'web-1')
    stack = world['reader'].request('GET', f'/stacks/{world["stack"]}')
    assert stack['stack']['servers']['web-1']['state'] == 'booted'
    # nothing else: the service writes no tenant's group
    service = client(world['scheduler'])
    error = refused(service.request, 'DELETE', f'/os-server-groups/{GROUP}')
    assert error.status == 403


def test_a_system_scoped_token_is_refused(keystone, cloud, world):
    system = api_client.Client(
        session(keystone, 'admin', conftest.ADMIN_PASSWORD, system=True),
        endpoint_override=cloud['api'])
    assert refused(system.request, 'GET', '/os-policy-scopes').status == 403
