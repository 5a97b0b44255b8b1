"""The openstackclient plugin against the running policy API.

The commands are loaded through their ``openstack.scoped_policies.v1``
entry points, as openstackclient loads them, and run with a client made
by the plugin's ``make_client`` on a keystoneauth1 session to the API
(served by wsgi-intercept, noauth2 identity headers).
"""

import io
import json
import types

from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from osc_lib import exceptions
import pytest
import requests
import stevedore
from wsgi_intercept import interceptor

from nova_scoped_policies.api import handler
from nova_scoped_policies.api.schemas import groups as group_schemas
from nova_scoped_policies.api.schemas import scopes as scope_schemas
from nova_scoped_policies.api.schemas import stacks as stack_schemas
from nova_scoped_policies.osc import plugin
from tests.functional.api import fixtures as fx
from tests.functional.api import test_visibility as tv

URL = 'http://policy-api-osc.invalid'
COMMANDS = {
    # every route of nova_scoped_policies.api.handler, with its command
    ('/', 'GET', None): 'scoped_policy_version_list',
    ('/os-policy-scopes', 'GET', None): 'scoped_policy_scope_list',
    ('/os-policy-scopes', 'POST', None): 'scoped_policy_scope_create',
    ('/os-policy-scopes/{scope}', 'GET', None): 'scoped_policy_scope_show',
    ('/os-policy-scopes/{scope}', 'PUT', None): 'scoped_policy_scope_set',
    ('/os-policy-scopes/{scope}', 'DELETE', None):
        'scoped_policy_scope_delete',
    ('/os-policy-scopes/{scope}/action', 'POST', 'add_aggregate'):
        'scoped_policy_scope_add_aggregate',
    ('/os-policy-scopes/{scope}/action', 'POST', 'remove_aggregate'):
        'scoped_policy_scope_remove_aggregate',
    ('/os-server-groups', 'GET', None): 'scoped_policy_group_list',
    ('/os-server-groups', 'POST', None): 'scoped_policy_group_set',
    ('/os-server-groups/{uuid}', 'GET', None): 'scoped_policy_group_show',
    ('/os-server-groups/{uuid}', 'POST', None): 'scoped_policy_group_set',
    ('/os-server-groups/{uuid}', 'DELETE', None):
        'scoped_policy_group_delete',
    ('/os-server-groups/{uuid}/action', 'POST', 'add_instance'):
        'scoped_policy_group_add_instance',
    ('/os-server-groups/{uuid}/action', 'POST', 'remove_instance'):
        'scoped_policy_group_remove_instance',
    ('/os-server-groups/{uuid}/audit', 'GET', None):
        'scoped_policy_group_audit',
    ('/stacks', 'GET', None): 'scoped_policy_stack_list',
    ('/stacks', 'POST', None): 'scoped_policy_stack_create',
    ('/stacks/{id}', 'GET', None): 'scoped_policy_stack_show',
    ('/stacks/{id}', 'DELETE', None): 'scoped_policy_stack_delete',
    ('/stacks/{id}/action', 'POST', 'renew'): 'scoped_policy_stack_renew',
    ('/stacks/{id}/action', 'POST', 'confirm'):
        'scoped_policy_stack_confirm',
    ('/stacks/{id}/action', 'POST', 'boot_member'):
        'scoped_policy_stack_boot_member',
    ('/stacks/{id}/audit', 'GET', None): 'scoped_policy_stack_audit',
    ('/repairs', 'POST', None): 'scoped_policy_repair_plan',
    ('/repairs/apply', 'POST', None): 'scoped_policy_repair_apply',
    ('/repairs/tasks', 'GET', None): 'scoped_policy_repair_task_list',
    ('/repairs/tasks/{id}', 'GET', None): 'scoped_policy_repair_task_show',
    ('/repairs/tasks/{id}', 'DELETE', None):
        'scoped_policy_repair_task_cancel',
    ('/export', 'GET', None): 'scoped_policy_export',
}
ACTIONS = {'/os-policy-scopes/{scope}/action': scope_schemas.ACTION,
           '/os-server-groups/{uuid}/action': group_schemas.ACTION,
           '/stacks/{id}/action': stack_schemas.ACTION}


@pytest.fixture(scope='module')
def api():
    fixture = fx.APIFixture()
    fixture.start_fixture()
    intercept = interceptor.RequestsInterceptor(lambda: fx._APP, url=URL)
    intercept.install_intercept()
    yield
    intercept.uninstall_intercept()
    fixture.stop_fixture()


def _app(headers):
    http = requests.Session()
    http.trust_env = False
    session = ks_session.Session(auth=token_endpoint.Token(URL, 'x'),
                                 session=http)
    manager = types.SimpleNamespace(
        session=session, region_name=None, interface='public',
        _api_version={plugin.API_NAME: '1'})
    client = plugin.make_client(manager)
    client.adapter.additional_headers = headers
    return types.SimpleNamespace(
        client_manager=types.SimpleNamespace(scoped_policies=client),
        stdout=io.StringIO(), stderr=io.StringIO(), options=None)


ENTRY_POINTS = {ext.name: ext.plugin for ext in stevedore.ExtensionManager(
    'openstack.scoped_policies.v1')}


def run_status(headers, name, *argv):
    """Run a command with table output; return its exit status."""
    app = _app(headers)
    cmd = ENTRY_POINTS[name](app, None)
    parser = cmd.get_parser(f'openstack {name.replace("_", " ")}')
    return cmd.run(parser.parse_args(list(argv)))


def run(headers, name, *argv):
    """Run ``openstack <name> argv -f json``; return (output, app)."""
    app = _app(headers)
    cmd = ENTRY_POINTS[name](app, None)
    parser = cmd.get_parser(f'openstack {name.replace("_", " ")}')
    shown = hasattr(cmd, 'produce_output')
    args = parser.parse_args(list(argv) + (['-f', 'json'] if shown
                                           else []))
    cmd.run(args)
    out = app.stdout.getvalue()
    return (json.loads(out) if out else None), app


def test_every_route_has_a_command_and_every_command_is_registered():
    routes = set()
    for path, methods in handler.ROUTE_DECLARATIONS.items():
        for method in methods:
            actions = ACTIONS[path]['properties'] if path in ACTIONS \
                else [None]
            routes |= {(path, method, action) for action in actions}
    assert routes == set(COMMANDS)
    # and ``openstack scoped policy`` alone: the overview of the commands
    assert set(ENTRY_POINTS) == set(COMMANDS.values()) | {'scoped_policy'}


def test_scope_commands(api):
    agg = fx.AGGREGATES
    created, _ = run(tv.ADMIN, 'scoped_policy_scope_create', 'zone',
                     '--allow-identifiers', '--obfuscate-identifiers',
                     '--namespace', fx.NS, '--aggregate', agg['ZONE_X'])
    assert created['aggregates'] == [agg['ZONE_X']]
    assert created['allow_identifiers'] and created['obfuscate_identifiers']
    shown, _ = run(tv.ADMIN, 'scoped_policy_scope_add_aggregate', 'zone',
                   agg['ZONE_Y'])
    assert shown['aggregates'] == [agg['ZONE_X'], agg['ZONE_Y']]
    # a tenant sees its own identifiers
    mine, _ = run(tv.A, 'scoped_policy_scope_show', 'zone')
    env = fx.environment()
    assert sorted(mine['aggregates']) == sorted(
        [env['ZONE_X_FOR_A'], env['ZONE_Y_FOR_A']])
    run(tv.ADMIN, 'scoped_policy_scope_create', 'rack')
    run(tv.ADMIN, 'scoped_policy_scope_set', 'rack', '--name', 'cabinet',
        '--allow-identifiers')
    listed, _ = run(tv.A, 'scoped_policy_scope_list')
    assert [(s['name'], s['allow_identifiers']) for s in listed] == [
        ('cabinet', True), ('zone', True)]
    with pytest.raises(exceptions.CommandError,
                       match='409 hosts h4, h5 would be in two domains'):
        run(tv.ADMIN, 'scoped_policy_scope_add_aggregate', 'zone',
            agg['RACK_C'])
    with pytest.raises(exceptions.CommandError, match='403'):
        run(tv.A, 'scoped_policy_scope_delete', 'cabinet')
    run(tv.ADMIN, 'scoped_policy_scope_remove_aggregate', 'zone',
        agg['ZONE_Y'])
    run(tv.ADMIN, 'scoped_policy_scope_delete', 'cabinet')
    with pytest.raises(exceptions.CommandError, match='404'):
        run(tv.ADMIN, 'scoped_policy_scope_show', 'cabinet')


def test_group_commands(api):
    run(tv.ADMIN, 'scoped_policy_scope_create', 'rack', '--aggregate',
        fx.AGGREGATES['RACK_A'], '--aggregate', fx.AGGREGATES['RACK_B'])
    created, _ = run(tv.A, 'scoped_policy_group_set', tv.G1,
                     '--policy', 'anti-affinity:rack', '--rule',
                     'max_server_per_rack=1', '--name', 'db')
    assert created['policies'] == ['anti-affinity:rack']
    assert created['rules'] == {'max_server_per_rack': 1}
    for member in (tv.I1, tv.I2):
        added, _ = run(tv.A, 'scoped_policy_group_add_instance',
                       tv.G1, member)
    assert added['members'] == [tv.I1, tv.I2]
    audit, app = run(tv.A, 'scoped_policy_group_audit', tv.G1)
    members = audit['members']
    assert [m['instance_id'] for m in members] == [tv.I1, tv.I2]
    assert members[0]['placements']['rack'] == \
        members[1]['placements']['rack']
    assert audit['violations'][0].startswith('anti-affinity:rack:')
    # --exit-code: the command's status is 1 with violations
    assert run_status(tv.A, 'scoped_policy_group_audit', tv.G1,
                      '--exit-code') == 1
    assert run_status(tv.A, 'scoped_policy_group_audit', tv.G1) == 0
    # a group by its name
    shown, _ = run(tv.A, 'scoped_policy_group_show', 'db')
    assert shown['id'] == tv.G1
    listed, _ = run(tv.A, 'scoped_policy_group_list')
    assert [g['id'] for g in listed] == [tv.G1]
    assert listed[0]['policies'] == ['anti-affinity:rack']
    # set again: an update of the same group
    updated, _ = run(tv.A, 'scoped_policy_group_set', tv.G1,
                     '--policy', 'soft-anti-affinity:rack')
    assert updated['policies'] == ['soft-anti-affinity:rack']
    assert updated['name'] == 'db'
    run(tv.A, 'scoped_policy_group_remove_instance', tv.G1, tv.I2)
    shown, _ = run(tv.A, 'scoped_policy_group_show', tv.G1)
    assert shown['members'] == [tv.I1]
    with pytest.raises(exceptions.CommandError, match='404'):
        run(tv.B, 'scoped_policy_group_show', tv.G1)
    with pytest.raises(exceptions.CommandError,
                       match=r"server_group.policy.name"):
        run(tv.A, 'scoped_policy_group_set', tv.G1, '--policy',
            'affinity:nowhere')
    with pytest.raises(exceptions.CommandError, match='key=value'):
        run(tv.A, 'scoped_policy_group_set', tv.G1, '--rule', 'x')


def test_stack_commands(api, tmp_path):
    """Decide, show, renew, boot a member, confirm, delete, by name."""
    doc = tmp_path / 'stack.yaml'
    doc.write_text('name: web\ngroup: {name: w, policies: '
                   '[anti-affinity:host], servers: {count: 2, flavor: '
                   '{resources: {VCPU: 1}}}}\n')
    created, _ = run(tv.A, 'scoped_policy_stack_create', '--file', str(doc))
    assert created['status'] == 'reserved'
    assert set(created['servers']) == {'w-1', 'w-2'}
    listed, _ = run(tv.A, 'scoped_policy_stack_list')
    assert [s['name'] for s in listed] == ['web']
    renewed, _ = run(tv.A, 'scoped_policy_stack_renew', 'web',
                     '--lease-seconds', '60')
    assert renewed['lease_seconds'] == created['lease_seconds']
    booted, _ = run(tv.ADMIN, 'scoped_policy_stack_boot_member',
                    created['id'], 'w-1')
    assert booted['servers']['w-1'].endswith('(booted)')
    confirmed, _ = run(tv.A, 'scoped_policy_stack_confirm', 'web')
    # confirmed with a server booted: the stack is live
    assert confirmed['status'] == 'live'
    assert confirmed['servers']['w-2'].endswith('(released)')
    audit, _ = run(tv.A, 'scoped_policy_stack_audit', 'web')
    assert (audit['stack_id'], audit['status']) == (created['id'], 'ok')
    assert [(p['field'], p['status']) for p in audit['policies']] == [
        ('stack.group', 'ok')]
    assert run_status(tv.A, 'scoped_policy_stack_audit', 'web',
                      '--exit-code') == 0
    run(tv.A, 'scoped_policy_stack_delete', 'web')
    assert run(tv.A, 'scoped_policy_stack_list')[0] == []
