"""Stacks end to end in the real nova-scheduler and the real Placement:
``POST /stacks`` decides and holds, each server boots with the plan hints
on its decided host as its hold is given back, ``confirm`` releases the
rest; a move is never pinned; bad hints fail the boot with a reason.

Hosts run nova's ``MediumFakeDriver`` (8192 MB with 512 reserved: one
m1.medium of 4096 MB per host), so capacity decides: rack-0 has 4 hosts,
rack-1 and rack-2 two each. The stack is the greedy-fails/joint-fits case
of issue #14: group ``a`` (2 x m1.medium, one per host) and group ``b``
(4 x m1.medium, one per host, all in one rack).
One at a time, ``a`` may take two hosts of rack-0 and ``b`` then fits no
rack; jointly ``a`` goes to rack-1/rack-2 and ``b`` to rack-0.
"""

import collections
import json
import time

import fixtures
from oslo_config import cfg
import webob

from nova import context as nova_context
from nova.scheduler.client import report
# OR-Tools asks os.uname() when first imported, which nova's TestCase
# forbids inside a test: import it with the module, as the service does
# at its first stack
from ortools.sat.python import cp_model  # noqa: F401
from nova.tests import fixtures as nova_fixtures
from nova_scoped_policies.api import deploy
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration
from nova_scoped_policies.placement import holds
from nova_scoped_policies.scheduler import state
from tests.functional import base
from tests import placement_fixtures as pf

ADMIN = {'X-Project-Id': 'admin', 'X-Roles': 'admin'}
MEDIUM = {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 40}   # nova's m1.medium
STACK = {'stack': {
    'name': 'app', 'lease_seconds': 600,
    'group': {'name': 'root', 'members': [
        {'name': 'a', 'policies': ['anti-affinity:host'],
         'servers': {'count': 2, 'flavor': {'resources': MEDIUM}}},
        {'name': 'b', 'policies': ['anti-affinity:host', 'affinity:rack'],
         'servers': {'count': 4, 'flavor': {'resources': MEDIUM}}}]}}}


class StackCloud(base.ScopedPoliciesTestCase):
    """nova with the policy API beside it (noauth2, a SQLite store the
    scheduler reads with ``store_driver = sql``) and a ``rack`` scope of
    the ``RACKS`` aggregates; no test of its own."""

    def setUp(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        url = self.store_url(tmp)
        self.store = store_api.PolicyStore(url)
        migration.upgrade(self.store.engine)
        self.addCleanup(self.store.engine.dispose)
        super().setUp()
        self.flags(store_driver='sql', store_cache_ttl=0,
                   group='scoped_policies')
        self.flags(connection=url, group='policy_store')
        conf = cfg.ConfigOpts()
        nsp_conf.register_opts(conf)
        conf([], default_config_files=[])
        conf.set_override('auth_strategy', 'noauth2',
                          group='scoped_policies_api')
        self.placement_client = pf.client_for(self.placement_fixture,
                                              holds.HOLD_VERSION)
        self.conf = conf
        self.app = deploy.loadapp(conf, self.store, self.placement_client,
                                  nova=self.nova_client())
        self.project = nova_fixtures.PROJECT_ID
        racks = [a['uuid'] for a in self.admin_api.api_get(
            '/os-aggregates').body['aggregates'] if a['name'] in self.RACKS]
        self.call('POST', '/os-policy-scopes', {'policy_scope': {
            'name': 'rack', 'aggregates': racks}}, ADMIN, expect=201)
        self.flavor = next(f['id'] for f in self.api.get_flavors()
                           if f['name'] == self.FLAVOR)

    FLAVOR = 'm1.medium'
    VERSION = 'scoped-policies 1.1'

    def store_url(self, directory):
        """The policy store's database (an SQLite file in ``directory``)."""
        return f'sqlite:///{directory}/store.db'

    def nova_client(self):
        """The policy API's Nova client (``[nova]``), or None."""
        return None

    def call(self, method, path, body=None, headers=None, expect=200):
        req = webob.Request.blank(path, method=method, headers=dict(
            headers or {'X-Project-Id': self.project, 'X-Roles': 'member'},
            **{'OpenStack-API-Version': self.VERSION}))
        if body is not None:
            req.content_type = 'application/json'
            req.body = json.dumps(body).encode()
        resp = req.get_response(self.app)
        if expect is not None:
            self.assertEqual(expect, resp.status_code, resp.text)
        return resp.json if resp.body else None

    def boot(self, hints, expected='ACTIVE', name='s'):
        server = self._build_server(name=name, image_uuid=base.IMAGE,
                                    flavor_id=self.flavor, networks='none')
        created = self.api.post_server(
            {'server': server, 'os:scheduler_hints': hints})
        return self._wait_for_state_change(created, expected,
                                           max_retries=base.WAIT_RETRIES)

    def decide(self, document):
        """POST a stack; its decision (admin view: real hosts)."""
        stack = self.call('POST', '/stacks', document, expect=201)['stack']
        return self.call('GET', f'/stacks/{stack["id"]}',
                         headers=ADMIN)['stack']

    def held(self):
        """Hold consumers still holding capacity, in all of Placement."""
        count = 0
        for rp in self.placement_client.list_providers():
            allocations = self.placement_client.request(
                'GET', f'/resource_providers/{rp["uuid"]}/allocations'
            ).json()['allocations']
            for consumer in allocations:
                found = self.placement_client.request(
                    'GET', f'/allocations/{consumer}').json()
                count += found.get('consumer_type') == holds.CONSUMER_TYPE
        return count


class StackBootTest(StackCloud):
    RACKS = collections.OrderedDict([
        ('rack-0', ['h1', 'h2', 'h3', 'h4']),
        ('rack-1', ['h5', 'h6']),
        ('rack-2', ['h7', 'h8'])])
    COMPUTE_DRIVER = 'fake.MediumFakeDriver'

    def test_decide_hold_boot_confirm(self):
        stack = self.call('POST', '/stacks', STACK, expect=201)['stack']
        self.assertEqual(6, self.held())
        decided = self.call('GET', f'/stacks/{stack["id"]}', headers=ADMIN
                            )['stack']['servers']
        # jointly: b fills rack-0, a goes elsewhere
        self.assertEqual({'rack-0'}, {self.rack_of[decided[f'b-{i}']['host']]
                                      for i in range(1, 5)})
        self.assertNotIn('rack-0', {self.rack_of[decided[f'a-{i}']['host']]
                                    for i in (1, 2)})
        # while held, a plain boot finds no room in rack-0... nor anywhere
        # a held server would go
        released, claimed = {}, {}
        real_delete = report.SchedulerReportClient.\
            delete_allocation_for_instance
        real_claim = report.SchedulerReportClient.claim_resources

        def delete(client, ctxt, uuid, *args, **kwargs):
            released[uuid] = time.monotonic()
            return real_delete(client, ctxt, uuid, *args, **kwargs)

        def claim(client, ctxt, consumer, *args, **kwargs):
            claimed[consumer] = time.monotonic()
            return real_claim(client, ctxt, consumer, *args, **kwargs)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'delete_allocation_for_instance', delete))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'claim_resources', claim))

        servers = {}
        for name in ('b-1', 'b-2', 'a-1', 'b-3', 'b-4'):
            servers[name] = self.boot(stack['hints'][name], name=name)
            self.assertEqual(decided[name]['host'],
                             self.host_of(servers[name]), name)
        # each boot gives its member's hold back, then claims; the window
        # between the two is printed (see doc/source/admin/holds.rst)
        order = sorted(released.values())
        windows = [claimed[s['id']] - max(t for t in order
                                          if t <= claimed[s['id']])
                   for s in servers.values()]
        print(f'hold release -> claim: max {max(windows) * 1000:.1f} ms, '
              f'median {sorted(windows)[len(windows) // 2] * 1000:.1f} ms')
        shown = self.call('GET', f'/stacks/{stack["id"]}')['stack']
        self.assertEqual('booted', shown['servers']['b-4']['state'])
        self.assertEqual('held', shown['servers']['a-2']['state'])
        self.assertEqual(1, self.held())
        # the stack is built without a-2: confirm gives its hold back
        shown = self.call('POST', f'/stacks/{stack["id"]}/action',
                          {'confirm': None})['stack']
        self.assertEqual('released', shown['servers']['a-2']['state'])
        self.assertEqual(0, self.held())
        # a released member cannot boot from the decision any more
        failed = self.boot(stack['hints']['a-2'], expected='ERROR')
        self.assertIn('was released', failed['fault']['message'])

    def test_bad_hints_fail_with_a_reason(self):
        stack = self.call('POST', '/stacks', STACK, expect=201)['stack']
        failed = self.boot({'scoped_plan': stack['id']}, expected='ERROR')
        self.assertIn('scoped_plan and scoped_plan_member go together',
                      failed['fault']['message'])
        failed = self.boot({'scoped_plan': stack['id'],
                            'scoped_plan_member': 'zz-1'}, expected='ERROR')
        self.assertIn("has no server 'zz-1'", failed['fault']['message'])
        # the hold is untouched by failed boots
        self.assertEqual(6, self.held())
        self.call('DELETE', f'/stacks/{stack["id"]}', expect=204)
        self.assertEqual(0, self.held())

    def test_a_move_is_never_pinned(self):
        stack = self.call('POST', '/stacks', STACK, expect=201)['stack']
        server = self.boot(stack['hints']['a-1'], name='a-1')
        self.call('DELETE', f'/stacks/{stack["id"]}', expect=204)
        source = self.host_of(server)
        self.admin_api.post_server_action(server['id'], {'migrate': None})
        server = self._wait_for_state_change(server, 'VERIFY_RESIZE')
        self.assertNotEqual(source, self.host_of(server))

    def test_one_instance_per_server_until_it_is_gone(self):
        stack = self.call('POST', '/stacks', STACK, expect=201)['stack']
        first = self.boot(stack['hints']['a-1'], name='a-1')
        # a double submit, a retry: refused while the first exists
        failed = self.boot(stack['hints']['a-1'], expected='ERROR')
        self.assertIn("server 'a-1' of decision", failed['fault']['message'])
        self.assertIn('exists already as another instance',
                      failed['fault']['message'])
        self._delete_server(failed)
        # once the first is deleted, a new one takes its place (pinned to
        # the decided host) and is recorded
        host = self.host_of(first)
        self._delete_server(first)
        second = self.boot(stack['hints']['a-1'], name='a-1')
        self.assertEqual(host, self.host_of(second))
        shown = self.call('GET', f'/stacks/{stack["id"]}')['stack']
        self.assertEqual(second['id'],
                         shown['servers']['a-1']['instance_uuid'])

    def test_a_booting_first_instance_counts_as_existing(self):
        # the first instance scheduled but not built (no host yet): a
        # second boot of the same server is refused all the same
        stack = self.call('POST', '/stacks', STACK, expect=201)['stack']
        first = self.boot(stack['hints']['a-1'], name='a-1')
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.scheduler.members.NovaMemberLocator.'
            'instance_host', lambda self, ctxt, uuid: None))
        self.assertTrue(state.states().sources.instance_alive(
            nova_context.get_admin_context(), first['id']))
        failed = self.boot(stack['hints']['a-1'], expected='ERROR')
        self.assertIn('exists already as another instance',
                      failed['fault']['message'])
