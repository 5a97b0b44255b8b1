"""The Heat resources with the real Heat engine (in-process, SQLite) and the
real policy service and Placement (``serve.py``, in the main virtualenv).

Run in ``.venv-heat`` by tools/run-tests.sh. The resources are loaded the
way an operator installs them: from Heat's ``plugin_dirs`` (a directory
holding nova_scoped_policies/heat/plugin.py). Servers are a test resource
that does what booting with the hints does at the scheduler: give its
member's hold back (``boot_member``), or fail to build.
"""

import json
import os
import shutil
import subprocess
import tempfile

from heat.tests import common  # noqa: F401  (before heat.engine)
from heat.common import exception
from heat.common import template_format
from heat.engine import properties
from heat.engine import resource
from heat.engine import resources
from heat.tests import utils
from oslo_config import cfg
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
MAIN_PYTHON = os.path.join(ROOT, '.venv', 'bin', 'python')
ADMIN = {'X-Project-Id': 'admin', 'X-Roles': 'admin',
         'OpenStack-API-Version': 'scoped-policies 1.1'}
SERVICES = {}
CALLS = []

TEMPLATE = '''
heat_template_version: 2021-04-16
resources:
  plan:
    type: OS::ScopedPolicies::Stack
    properties:
      name: app
      lease_seconds: 600
      group:
        name: root
        policies: [anti-affinity:rack]
        members:
        - name: web
          policies: [anti-affinity:host]
          servers: {count: 2, flavor: {resources: {VCPU: 4, MEMORY_MB: 1024}}}
        - name: db
          servers: {names: [db-a], flavor: {resources: {VCPU: 8}}}
  web-1:
    type: Test::HintedServer
    properties: {hints: {get_attr: [plan, hints, web-1]}}
  web-2:
    type: Test::HintedServer
    properties: {hints: {get_attr: [plan, hints, web-2]}, fail: FAIL}
  db-a:
    type: Test::HintedServer
    properties: {hints: {get_attr: [plan, hints, db-a]}}
  confirm:
    type: OS::ScopedPolicies::Confirm
    depends_on: [web-1, web-2, db-a]
    properties: {plan: {get_resource: plan}}
outputs:
  plan: {value: {get_attr: [plan, plan_id]}}
'''


def setUpModule():
    """Start the services; install the plugin into Heat's plugin_dirs."""
    proc = subprocess.Popen([MAIN_PYTHON, os.path.join(ROOT, 'tests', 'heat',
                                                       'serve.py')],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError('tests/heat/serve.py did not start; run it with '
                           f'{MAIN_PYTHON} to see why')
    SERVICES.update(json.loads(line), proc=proc)
    plugins = tempfile.mkdtemp(prefix='nsp-heat-plugins-')
    SERVICES['plugins'] = plugins
    shutil.copy(os.path.join(ROOT, 'nova_scoped_policies', 'heat',
                             'plugin.py'),
                os.path.join(plugins, 'scoped_policies_plugin.py'))
    cfg.CONF.set_override('plugin_dirs', [plugins])
    # what HeatTestCase sets before its first stack, then the global
    # environment loaded again with our plugin_dirs
    etc = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        common.__file__))), 'etc', 'heat')
    cfg.CONF.set_default('environment_dir',
                         os.path.join(etc, 'environment.d'))
    cfg.CONF.set_default('template_dir', os.path.join(etc, 'templates'))
    resources._environment = None
    resources.initialise()


def tearDownModule():
    SERVICES['proc'].stdin.close()
    SERVICES['proc'].wait(timeout=30)
    shutil.rmtree(SERVICES['plugins'])
    cfg.CONF.clear_override('plugin_dirs')


def api(method, path, body=None, headers=None):
    resp = requests.request(method, SERVICES['api'] + path, json=body,
                            headers=headers or ADMIN, timeout=30)
    return resp.status_code, (resp.json() if resp.content else None)


def vcpus_used():
    total = 0
    providers = requests.get(
        SERVICES['placement'] + '/resource_providers',
        headers={'x-auth-token': 'admin'}, timeout=30).json()
    for rp in providers['resource_providers']:
        total += requests.get(
            SERVICES['placement'] + f'/resource_providers/{rp["uuid"]}/usages',
            headers={'x-auth-token': 'admin'}, timeout=30
        ).json()['usages'].get('VCPU', 0)
    return total


class HintedServer(resource.Resource):
    """Stands in for OS::Nova::Server: takes the scheduler hints and does
    what the scheduler does with them (boot_member), or fails to build."""

    properties_schema = {
        'hints': properties.Schema(properties.Schema.MAP, required=True),
        'fail': properties.Schema(properties.Schema.BOOLEAN, default=False),
    }

    def handle_create(self):
        hints = self.properties['hints']
        if self.properties['fail']:
            raise exception.Error(f'{self.name}: build failed')
        status, body = api('POST', f'/stacks/{hints["scoped_plan"]}/action',
                           {'boot_member': {
                               'name': hints['scoped_plan_member']}})
        assert status == 200, body
        CALLS.append(f'boot {hints["scoped_plan_member"]}')

    def handle_delete(self):
        return None


def as_member(case) -> None:
    """Heat's test contexts carry the tenant's ``member`` role, as a
    Keystone token does: the client plugin sends the context's roles to
    the policy API (noauth), whose rules let a member decide stacks."""
    real = utils.dummy_context

    def dummy_context(*args, **kwargs):
        kwargs.setdefault('roles', ['member'])
        return real(*args, **kwargs)
    case.patchobject(utils, 'dummy_context', side_effect=dummy_context)


class ResourcesTest(common.HeatTestCase):

    def setUp(self):
        super().setUp()
        as_member(self)
        cfg.CONF.set_override('endpoint_override', SERVICES['api'],
                              group='clients_scoped_policies')
        cfg.CONF.set_override('noauth', True,
                              group='clients_scoped_policies')
        resource._register_class('Test::HintedServer', HintedServer)
        from nova_scoped_policies.heat import client
        real = client.call

        def recorded(adapter, method, url, body=None):
            CALLS.append(f'{method} {url.split("/")[1]}' + (
                f' {next(iter(body))}' if body else ''))
            return real(adapter, method, url, body)
        self.patchobject(client, 'call', side_effect=recorded)
        CALLS.clear()
        self.ctx = utils.dummy_context()

    def stack(self, fail=False, text=TEMPLATE):
        tmpl = template_format.parse(text.replace('FAIL', str(fail).lower()))
        return utils.parse_stack(tmpl, stack_name='app')

    def test_loaded_from_plugin_dirs(self):
        info = resources.global_env().get_class('OS::ScopedPolicies::Stack')
        self.assertEqual('ScopedStack', info.__name__)

    def test_create_decides_boots_and_confirms_then_delete(self):
        before = vcpus_used()
        stack = self.stack()
        stack.validate()
        stack.create()
        self.assertEqual((stack.CREATE, stack.COMPLETE), stack.state,
                         stack.status_reason)
        plan = stack['plan'].resource_id
        self.assertEqual(plan, stack['plan'].FnGetAtt('plan_id'))
        # define + decide first, each server booted from the decision,
        # confirm last
        self.assertEqual('POST stacks stack', CALLS[0])
        self.assertEqual({'boot web-1', 'boot web-2', 'boot db-a'},
                         {c for c in CALLS if c.startswith('boot')})
        self.assertEqual('POST stacks confirm', CALLS[-1])
        status, body = api('GET', f'/stacks/{plan}')
        self.assertEqual('confirmed', body['stack']['status'])
        hosts = {n: s['host'] for n, s in body['stack']['servers'].items()}
        racks = {h: r for r, hs in SERVICES['racks'].items() for h in hs}
        self.assertNotEqual(racks[hosts['db-a']], racks[hosts['web-1']])
        self.assertNotEqual(hosts['web-1'], hosts['web-2'])
        self.assertEqual(before, vcpus_used())   # every hold given back
        stack.delete()
        self.assertEqual((stack.DELETE, stack.COMPLETE), stack.state)
        self.assertEqual(404, api('GET', f'/stacks/{plan}')[0])

    def test_a_server_that_fails_leaves_holds_until_the_stack_is_deleted(
            self):
        before = vcpus_used()
        stack = self.stack(fail=True)
        stack.create()
        self.assertEqual((stack.CREATE, stack.FAILED), stack.state)
        self.assertNotIn('POST stacks confirm', CALLS)
        plan = stack['plan'].resource_id
        status, body = api('GET', f'/stacks/{plan}')
        self.assertEqual('reserved', body['stack']['status'])
        self.assertEqual('held', body['stack']['servers']['web-2']['state'])
        self.assertGreater(vcpus_used(), before)
        stack.delete()
        self.assertEqual((stack.DELETE, stack.COMPLETE), stack.state)
        self.assertEqual(before, vcpus_used())

    def test_a_bad_group_tree_is_refused_naming_the_path(self):
        stack = self.stack(text=TEMPLATE.replace('count: 2', 'count: 0'))
        exc = self.assertRaises(exception.StackValidationFailed,
                                stack.validate)
        self.assertIn('resources.plan.properties.group.members[0].servers.'
                      'count', str(exc))
        self.assertIn('must be at least 1', str(exc))
        self.assertEqual([], CALLS)

    def test_a_decision_that_does_not_fit_fails_the_create(self):
        stack = self.stack(text=TEMPLATE.replace('count: 2', 'count: 6'))
        stack.create()
        self.assertEqual((stack.CREATE, stack.FAILED), stack.state)
        self.assertIn('does not fit', stack.status_reason)

    def test_updates_renew_or_replace(self):
        stack = self.stack()
        stack.create()
        plan = stack['plan'].resource_id
        utils.update_stack(stack, template_format.parse(
            TEMPLATE.replace('FAIL', 'false').replace(
                'lease_seconds: 600', 'lease_seconds: 900')))
        self.assertEqual((stack.UPDATE, stack.COMPLETE), stack.state,
                         stack.status_reason)
        self.assertEqual(plan, stack['plan'].resource_id)
        self.assertIn('POST stacks renew', CALLS)
        # a new tree is a new decision; the old one is released
        utils.update_stack(stack, template_format.parse(
            TEMPLATE.replace('FAIL', 'false').replace(
                'policies: [anti-affinity:rack]',
                'policies: [soft-anti-affinity:rack]')))
        self.assertEqual((stack.UPDATE, stack.COMPLETE), stack.state,
                         stack.status_reason)
        self.assertNotEqual(plan, stack['plan'].resource_id)
        self.assertEqual(404, api('GET', f'/stacks/{plan}')[0])
        stack.delete()


class ExamplesTest(common.HeatTestCase):
    """examples/heat: each decision validates, and every server takes the
    hints of a server of the decision."""

    def test_examples(self):
        import glob
        from nova_scoped_policies.stacks import model
        paths = sorted(glob.glob(os.path.join(ROOT, 'examples', 'heat',
                                              '*.yaml')))
        self.assertEqual(4, len(paths))
        for path in paths:
            with open(path) as handle:
                tmpl = template_format.parse(handle.read())
            stack = utils.parse_stack(tmpl, params={
                'image': 'appserver', 'network': 'private'},
                stack_name=os.path.basename(path)[:-5])
            plan = stack['placement']
            plan.validate()
            decided = {s.name for s in model.parse(plan.document()).servers}
            hinted = set()
            for name, snippet in tmpl['resources'].items():
                if snippet['type'] != 'OS::Nova::Server':
                    continue
                hints = snippet['properties']['scheduler_hints']
                self.assertEqual(['placement', 'hints'],
                                 hints['get_attr'][:2], name)
                hinted.add(hints['get_attr'][2])
            self.assertEqual(decided, hinted, path)
