"""Repair plans in the real nova-scheduler with the real Placement.

A server group spread over hosts (``anti-affinity:host``) is tightened to
``anti-affinity:rack`` (the update spec allows a violating update): two of
its three servers share a rack. ``POST /repairs`` plans the fewest moves
(one), ``POST /repairs/apply`` carries them out through Nova's API (live
migrations without ``force``: nova-scheduler checks each), and the audit
is clean after. A plan whose world changed is refused before any move,
and a boot racing an apply breaks nothing.
"""

import collections
import io
import json
import socket
import threading
import time
import types
import uuid

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session

from nova.scheduler.client import report
from nova.tests import fixtures as nova_fixtures
import webob
from nova_scoped_policies.api import deploy
from nova_scoped_policies.api import moves as moves_mod
from nova_scoped_policies.api import nova as nova_api
from nova_scoped_policies.db import repair_tasks as task_db
from tests.functional import base
from tests.functional import test_stack_boots as stack_boots

ADMIN = stack_boots.ADMIN


class RepairCloud(stack_boots.StackCloud):
    """A group of three servers, two of them in rack-1 (anti-affinity:rack
    broken); no test of its own."""

    RACKS = collections.OrderedDict(
        (f'rack-{r}', [f'h{r}1', f'h{r}2']) for r in range(1, 4))
    FLAVOR = 'm1.tiny'
    VERSION = 'scoped-policies 1.2'

    def nova_client(self):
        api = self.admin_api
        adapter = ks_adapter.Adapter(
            ks_session.Session(), endpoint_override=api.base_url,
            additional_headers={
                'X-Auth-User': api.auth_user, 'X-User-Id': api.auth_user,
                'X-Auth-Project-Id': api.project_id,
                'X-Roles': ','.join(api.roles)})
        return nova_api.NovaGroups(adapter)

    def setUp(self):
        super().setUp()
        self.group = self.api.post_server_groups(
            {'name': 'g', 'policy': 'soft-anti-affinity'})
        self.call('POST', '/os-server-groups', {'server_group': {
            'id': self.group['id'], 'policies': ['anti-affinity:host']}},
            expect=200)
        self.servers = {}
        for host in ('h11', 'h12', 'h21'):
            server = self._build_server(
                name=host, image_uuid=base.IMAGE, flavor_id=self.flavor,
                networks='none', host=host)
            created = self.admin_api.post_server(
                {'server': server,
                 'os:scheduler_hints': {'group': self.group['id']}})
            self.servers[host] = self._wait_for_state_change(
                created, 'ACTIVE', max_retries=base.WAIT_RETRIES)
        # the tenant tightens the policy: two servers share rack-1
        self.call('POST', f'/os-server-groups/{self.group["id"]}',
                  {'server_group': {'policies': ['anti-affinity:rack']}})

    def audit(self):
        return self.call('GET', f'/os-server-groups/{self.group["id"]}'
                         '/audit', headers=ADMIN)[
            'server_group_policy_audit']['violations']

    def racks(self):
        return collections.Counter(
            self.rack_of[self.host_of(self.admin_api.get_server(s['id']))]
            for s in self.servers.values())

    def plan(self, headers=ADMIN):
        return self.call('POST', '/repairs', {'repair': {
            'server_group': self.group['id']}}, headers=headers)['repair']


class RepairTest(RepairCloud):

    def test_plan_then_apply_ends_the_violation(self):
        self.assertEqual(1, len(self.audit()))
        # the tenant sees the plan with surrogates for hosts
        mine = self.plan(headers=None)
        self.assertEqual('repaired', mine['status'])
        self.assertEqual(1, len(mine['moves']))
        self.assertNotIn(mine['moves'][0]['to'], self.rack_of)
        self.assertNotIn('rack-1', ' '.join(mine['violations']))
        plan = self.plan()
        (move,) = plan['moves']
        self.assertIn(move['from'], ('h11', 'h12'))
        self.assertEqual('rack-3', self.rack_of[move['to']])
        selected = []
        real = report.SchedulerReportClient.claim_resources

        def claim(client, ctxt, consumer, *args, **kwargs):
            selected.append(consumer)
            return real(client, ctxt, consumer, *args, **kwargs)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'claim_resources', claim))
        done = self.call('POST', '/repairs/apply', {'repair': {
            'server_group': self.group['id'],
            'fingerprint': plan['fingerprint'],
            'moves': plan['moves']}}, headers=ADMIN)['repair']
        self.assertEqual('applied', done['status'], done)
        self.assertEqual([], done['violations'])
        self.assertEqual([], self.audit())
        self.assertEqual({'rack-1': 1, 'rack-2': 1, 'rack-3': 1},
                         self.racks())
        # the move went through nova-scheduler (its claim)
        self.assertEqual([move['server']], selected)
        # nothing left to do
        self.assertEqual('nothing to do', self.plan()['status'])

    def test_a_move_notifies_the_violation_it_finds(self):
        # nova-scheduler finds the group broken when one of it moves, and
        # says so on nova's versioned notification bus
        notifier = self.useFixture(nova_fixtures.NotificationFixture(self))
        self._migrate_server(self.servers['h21'], api=self.admin_api)
        (sent,) = notifier.wait_for_versioned_notifications(
            'scoped_policy.violation')
        self.assertEqual('WARN', sent['priority'].upper())
        self.assertTrue(sent['publisher_id'].startswith(
            'nova-scoped-policies-scheduler:'))
        data = sent['payload']['nova_scoped_policies_object.data']
        self.assertEqual(('server_group', self.group['id']),
                         (data['kind'], data['id']))
        self.assertIn('anti-affinity:rack: ', data['violations'][0])
        self.assertIn('rack-1', data['violations'][0])

    def test_a_plan_whose_world_changed_is_refused_before_any_move(self):
        plan = self.plan()
        # another server of the group moved meanwhile
        other = self.servers['h21']
        self._live_migrate(other, api=self.admin_api, host='h22')
        refused = self.call('POST', '/repairs/apply', {'repair': {
            'server_group': self.group['id'],
            'fingerprint': plan['fingerprint'],
            'moves': plan['moves']}}, headers=ADMIN, expect=409)
        self.assertIn('nothing was moved', str(refused))
        self.assertEqual(2, self.racks()['rack-1'])

    def test_tenants_may_plan_but_not_apply_or_see_others(self):
        plan = self.plan(headers=None)
        self.call('POST', '/repairs/apply', {'repair': {
            'server_group': self.group['id'],
            'fingerprint': plan['fingerprint'],
            'moves': [dict(m, to='h31') for m in plan['moves']]}},
            headers=None, expect=403)
        other = {'X-Project-Id': 'other', 'X-Roles': 'member'}
        self.call('POST', '/repairs', {'repair': {
            'server_group': self.group['id']}}, headers=other, expect=404)
        self.call('POST', '/repairs', {'repair': {
            'server_group': str(uuid.uuid4())}}, headers=other, expect=404)
        self.call('POST', '/repairs', {'repair': {}}, headers=None,
                  expect=403)

    def test_a_boot_racing_an_apply_breaks_nothing(self):
        plan = self.plan()
        # a boot into the group is posted while the apply runs: the lock
        # of the group serialises the scheduler's decisions, and the boot
        # must not take the rack the move goes to
        server = self._build_server(name='late', image_uuid=base.IMAGE,
                                    flavor_id=self.flavor, networks='none')
        late = self.api.post_server({'server': server, 'os:scheduler_hints':
                                     {'group': self.group['id']}})
        done = self.call('POST', '/repairs/apply', {'repair': {
            'server_group': self.group['id'],
            'fingerprint': plan['fingerprint'],
            'moves': plan['moves']}}, headers=ADMIN, expect=None)
        deadline = time.monotonic() + 60
        while self.api.get_server(late['id'])['status'] == 'BUILD':
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.2)
        late = self.admin_api.get_server(late['id'])
        hosts = {name: self.host_of(self.admin_api.get_server(s['id']))
                 for name, s in self.servers.items()}
        racks = collections.Counter(self.rack_of[h] for h in hosts.values())
        # the late boot either took a rack of its own or found none left
        self.assertIn(late['status'], ('ACTIVE', 'ERROR'))
        if late['status'] == 'ACTIVE':
            self.assertNotIn(self.rack_of[self.host_of(late)], racks)
        else:
            self.assertIn('No valid host', late['fault']['message'])
        # the apply either ended the violation, or was refused before any
        # move because the late boot changed the group (nothing moved)
        if 'repair' in done:
            self.assertEqual('applied', done['repair']['status'], done)
            self.assertEqual(1, max(racks.values()), hosts)
        else:
            self.assertEqual(409, done['errors'][0]['status'], done)
            self.assertEqual(
                {name: self.host_of(s) for name, s in self.servers.items()},
                hosts)


class RepairTaskTest(RepairCloud):
    """``POST /repairs/apply`` at 1.4 starts a task the policy API runs in
    its background; GET follows it, the CLI too."""

    VERSION = 'scoped-policies 1.4'

    def task(self, id, headers=ADMIN):
        return self.call('GET', f'/repairs/tasks/{id}', headers=headers)[
            'task']

    def until_ended(self, id):
        deadline = time.monotonic() + 120
        while True:
            task = self.task(id)
            if task['status'] != 'running':
                return task
            self.assertLess(time.monotonic(), deadline, task)
            time.sleep(0.2)

    def apply(self, plan, expect=202):
        req_headers = dict(ADMIN, **{'OpenStack-API-Version': self.VERSION})
        req = webob.Request.blank('/repairs/apply', method='POST',
                                  headers=req_headers)
        req.content_type = 'application/json'
        req.body = json.dumps({'repair': {
            'server_group': self.group['id'],
            'fingerprint': plan['fingerprint'],
            'moves': plan['moves']}}).encode()
        resp = req.get_response(self.app)
        self.assertEqual(expect, resp.status_code, resp.text)
        return resp

    def test_a_task_carries_the_plan_out(self):
        plan = self.plan()
        resp = self.apply(plan)
        task = resp.json['task']
        self.assertEqual(
            f'http://localhost/repairs/tasks/{task["id"]}',
            resp.headers['Location'])
        self.assertEqual(plan['moves'], task['moves'])
        ended = self.until_ended(task['id'])
        self.assertEqual('applied', ended['status'], ended)
        self.assertEqual(plan['moves'], ended['done'])
        self.assertEqual(([], None), (ended['current'], ended['failed']))
        self.assertEqual([], self.audit())
        self.assertEqual('nothing to do', self.plan()['status'])
        listed = self.call('GET', '/repairs/tasks', headers=ADMIN)['tasks']
        self.assertEqual([task['id']], [t['id'] for t in listed])
        # the administrators' project's task: none of a tenant's (another
        # project's is not disclosed); an ended task cancels nothing
        self.call('GET', f'/repairs/tasks/{task["id"]}', expect=404)
        self.assertEqual([], self.call('GET', '/repairs/tasks')['tasks'])
        self.call('DELETE', f'/repairs/tasks/{task["id"]}', headers=ADMIN,
                  expect=409)
        self.call('GET', f'/repairs/tasks/{uuid.uuid4()}', headers=ADMIN,
                  expect=404)
        # no tasks before 1.4 (apply answers when done, as before)
        req = webob.Request.blank(f'/repairs/tasks/{task["id"]}', headers=dict(
            ADMIN, **{'OpenStack-API-Version': 'scoped-policies 1.3'}))
        self.assertEqual(404, req.get_response(self.app).status_code)

    def held_moves(self):
        """(go, started): each live migration waits for ``go`` before Nova
        is asked; ``started`` is set when the first one would start."""
        go = threading.Event()
        started = threading.Event()
        real = moves_mod.NovaMoves.start

        def start(mover, server, host):
            started.set()
            go.wait(60)
            return real(mover, server, host)
        self.useFixture(fixtures.MonkeyPatch(
            'nova_scoped_policies.api.moves.NovaMoves.start', start))
        self.addCleanup(go.set)
        return go, started

    def test_cancel_stops_after_the_running_move_and_claims_servers(self):
        plan = self.plan()
        go, started = self.held_moves()
        task = self.apply(plan).json['task']
        self.assertTrue(started.wait(60))
        running = self.task(task['id'])
        self.assertEqual(('running', plan['moves']),
                         (running['status'], running['current']))
        # another task may not move the same server, whichever process
        # starts it
        busy = self.apply(plan, expect=409).json
        self.assertEqual('scoped_policies.repair_busy',
                         busy['errors'][0]['code'])
        self.assertIn(plan['moves'][0]['server'],
                      busy['errors'][0]['detail'])
        cancelled = self.call('DELETE', f'/repairs/tasks/{task["id"]}',
                              headers=ADMIN, expect=202)['task']
        self.assertTrue(cancelled['cancel_requested'])
        go.set()
        ended = self.until_ended(task['id'])
        # the running move ended; the plan had no other
        self.assertEqual('applied', ended['status'], ended)
        self.assertEqual(plan['moves'], ended['done'])

    def test_a_restarted_api_marks_a_running_task_interrupted(self):
        plan = self.plan()
        gone = task_db.TaskStore(self.store, owner=f'{socket.gethostname()}'
                                 ':4194999:1')
        task = gone.create(self.project, 'server_group g', plan['moves'])
        gone.progress(task.id, [], plan['moves'])
        # the API process that ran it is gone: a new one starts
        self.app = deploy.loadapp(self.conf, self.store,
                                  self.placement_client,
                                  nova=self.nova_client())
        shown = self.task(task.id)
        self.assertEqual('interrupted', shown['status'])
        # what it was running may still run in Nova: said
        self.assertEqual(([], plan['moves']),
                         (shown['done'], shown['current']))
        # a new plan finishes the work, its servers free again
        again = self.plan()
        self.assertEqual(plan['moves'], again['moves'])
        self.assertEqual('applied', self.until_ended(
            self.apply(again).json['task']['id'])['status'])

    def test_the_cli_follows_the_task(self):
        from keystoneauth1 import token_endpoint
        import requests
        from wsgi_intercept import interceptor
        from nova_scoped_policies.osc import plugin
        from nova_scoped_policies.osc.v1 import repairs as cli
        url = 'http://policy-api-repairs.invalid'
        intercept = interceptor.RequestsInterceptor(lambda: self.app,
                                                    url=url)
        intercept.install_intercept()
        self.addCleanup(intercept.uninstall_intercept)
        http = requests.Session()
        http.trust_env = False
        manager = types.SimpleNamespace(
            session=ks_session.Session(
                auth=token_endpoint.Token(url, 'x'), session=http),
            region_name=None, interface='public',
            _api_version={plugin.API_NAME: '1'})
        client = plugin.make_client(manager)
        client.adapter.additional_headers = ADMIN
        app = types.SimpleNamespace(
            client_manager=types.SimpleNamespace(scoped_policies=client),
            stdout=io.StringIO(), stderr=io.StringIO(), options=None)
        command = cli.ApplyRepair(app, None)
        args = command.get_parser('openstack scoped policy repair apply'
                                  ).parse_args(['--server-group',
                                                self.group['id'],
                                                '--poll', '0.2'])
        columns, rows = command.take_action(args)
        self.assertEqual(1, len(rows))
        self.assertIn('repair task ', app.stderr.getvalue())
        self.assertEqual([], self.audit())


OTHER = 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5'


class SmallHosts:
    """Hosts of 4 VCPU (2 x ratio 2) and 8192 MB, none reserved."""

    def start_service(self, name, *args, **kwargs):
        if name == 'compute':
            self.flags(cpu_allocation_ratio=2.0, ram_allocation_ratio=1.0,
                       reserved_host_memory_mb=0)
        return super().start_service(name, *args, **kwargs)


class FullCloudRepairTest(SmallHosts, stack_boots.StackCloud):
    """Issue 37: g's two servers (anti-affinity:host) share hA and must
    split; hB, the only other host with room for a server of g once one
    server leaves it, is full of another project's soft-affinity servers
    (k); hC has room for one of k but not for one of g. The fewest moves
    are two: one of k to hC, then one of g to hB.

    Hosts have 4 VCPU (2 x ratio 2) and 8192 MB: a server of g takes
    2 VCPU and 1024 MB, one of k 1 VCPU and 4096 MB, hC's own server 3
    VCPU."""

    RACKS = collections.OrderedDict(
        (f'rack-{h}', [h]) for h in ('hA', 'hB', 'hC'))
    VERSION = 'scoped-policies 1.4'

    nova_client = RepairCloud.nova_client

    def flavor_of(self, name, vcpus, ram):
        return self.admin_api.post_flavor({'flavor': {
            'name': name, 'vcpus': vcpus, 'ram': ram, 'disk': 1}})['id']

    def group(self, api, project, name, nova_policy, policies):
        found = api.post_server_groups({'name': name,
                                        'policy': nova_policy})
        self.call('POST', '/os-server-groups', {'server_group': {
            'id': found['id'], 'policies': policies}},
            headers={'X-Project-Id': project, 'X-Roles': 'member'},
            expect=200)
        return found['id']

    def boot_on(self, api, name, flavor, host, group=None):
        server = self._build_server(name=name, image_uuid=base.IMAGE,
                                    flavor_id=flavor, networks='none',
                                    host=host)
        hints = {'group': group} if group else {}
        created = api.post_server({'server': server,
                                   'os:scheduler_hints': hints})
        return self._wait_for_state_change(created, 'ACTIVE',
                                           max_retries=base.WAIT_RETRIES)

    def other_api(self):
        """Nova's API as a member (and admin) of project OTHER."""
        from nova.tests.functional.api import client
        other = client.TestOpenStackClient(
            'other', self.api.base_url, project_id=OTHER,
            roles=['reader', 'member', 'admin'])
        other.microversion = '2.74'
        return other

    def setUp(self):
        super().setUp()
        other = self.other_api()
        big = self.flavor_of('g.cpu', 2, 1024)
        wide = self.flavor_of('k.ram', 1, 4096)
        lone = self.flavor_of('l.cpu', 1, 512)
        self.g = self.group(self.api, self.project, 'g',
                            'soft-anti-affinity', ['soft-anti-affinity:host'])
        k = self.group(other, OTHER, 'k', 'soft-affinity',
                       ['soft-affinity:host'])
        self.servers = {
            'g1': self.boot_on(self.admin_api, 'g1', big, 'hA', self.g),
            'g2': self.boot_on(self.admin_api, 'g2', big, 'hA', self.g),
            'k1': self.boot_on(other, 'k1', wide, 'hB', k),
            'k2': self.boot_on(other, 'k2', wide, 'hB', k),
            **{f'l{i}': self.boot_on(self.admin_api, f'l{i}', lone, 'hC')
               for i in range(3)}}
        # the tenant tightens g: both its servers share hA
        self.call('POST', f'/os-server-groups/{self.g}', {'server_group': {
            'policies': ['anti-affinity:host']}})

    def plan(self, headers=ADMIN):
        return self.call('POST', '/repairs', {'repair': {
            'server_group': self.g}}, headers=headers)['repair']

    def hosts(self):
        return {name: self.host_of(self.admin_api.get_server(s['id']))
                for name, s in self.servers.items()}

    task = RepairTaskTest.task
    until_ended = RepairTaskTest.until_ended
    held_moves = RepairTaskTest.held_moves

    def apply(self, plan, expect=202):
        self.group = {'id': self.g}
        return RepairTaskTest.apply(self, plan, expect)

    def test_a_cancel_stops_after_the_running_move(self):
        plan = self.plan()
        go, started = self.held_moves()
        task = self.apply(plan).json['task']
        self.assertTrue(started.wait(60))
        self.call('DELETE', f'/repairs/tasks/{task["id"]}', headers=ADMIN,
                  expect=202)
        go.set()
        ended = self.until_ended(task['id'])
        self.assertEqual('cancelled', ended['status'], ended)
        # the move running when the cancel came ended; the next did not
        self.assertEqual(plan['moves'][:1], ended['done'])
        hosts = self.hosts()
        self.assertEqual(('hA', 'hA'), (hosts['g1'], hosts['g2']))
        # a new plan finishes the work: one move left
        again = self.plan()
        self.assertEqual(plan['moves'][1:], again['moves'])

    def test_another_server_makes_room(self):
        ids = {s['id']: name for name, s in self.servers.items()}
        mine = self.plan(headers=None)
        self.assertEqual('repaired', mine['status'], mine)
        self.assertEqual(2, len(mine['moves']), mine)
        # the tenant sees k's server as another server, and that only an
        # administrator can carry the plan out
        self.assertEqual('another server', mine['moves'][0]['server'])
        self.assertEqual(ids[mine['moves'][1]['server']][0], 'g')
        self.assertTrue(mine['needs_administrator'])
        self.assertNotIn(OTHER, str(mine))
        plan = self.plan()
        self.assertEqual(
            [('k', 'hB', 'hC'), ('g', 'hA', 'hB')],
            [(ids[m['server']][0], m['from'], m['to'])
             for m in plan['moves']], plan)
        done = self.until_ended(self.apply(plan).json['task']['id'])
        self.assertEqual('applied', done['status'], done)
        hosts = self.hosts()
        self.assertNotEqual(hosts['g1'], hosts['g2'])
        self.assertEqual(4, list(hosts.values()).count('hC'))
        # a second plan has nothing to do
        self.assertEqual('nothing to do', self.plan()['status'])


def live_migrations(api):
    """instance uuid -> how many live migrations Nova made of it."""
    return collections.Counter(
        m['instance_uuid'] for m in api.api_get('/os-migrations').body[
            'migrations'] if m['migration_type'] == 'live-migration')


class SwapRepairTest(SmallHosts, stack_boots.StackCloud):
    """Issue 48: a stack of two pairs (``affinity:rack``, each host a rack
    of its own): p1 and q2 share hA with L, p2 and q1 share hB with M, both
    full; hC has room for one server. The pairs' own servers can only
    swap, which no order of single moves can take; moving L or M to hC
    first opens a slot: three moves, each server once.

    Hosts have 4 VCPU (2 x ratio 2) and 8192 MB; every server takes
    1 VCPU and 2730 MB, so a host has room for three."""

    RACKS = collections.OrderedDict(
        (f'rack-{h}', [h]) for h in ('hA', 'hB', 'hC'))
    VERSION = 'scoped-policies 1.4'
    SIZE = {'VCPU': 1, 'MEMORY_MB': 2730, 'DISK_GB': 1}

    nova_client = RepairCloud.nova_client
    boot_on = FullCloudRepairTest.boot_on
    hosts = FullCloudRepairTest.hosts
    task = RepairTaskTest.task
    until_ended = RepairTaskTest.until_ended

    def setUp(self):
        super().setUp()
        flavor = self.admin_api.post_flavor({'flavor': {
            'name': 'slot', 'vcpus': 1, 'ram': 2730, 'disk': 1}})['id']
        pair = {'servers': {'count': 2, 'flavor': {'resources': self.SIZE}},
                'policies': ['affinity:rack']}
        # decided on the empty cloud, its holds given back at once; the
        # servers then boot where the test puts them
        stack = self.call('POST', '/stacks', {'stack': {
            'name': 's', 'group': {'name': 'root', 'members': [
                dict(pair, name='p'), dict(pair, name='q')]}}},
            expect=201)['stack']
        self.stack = stack['id']
        for name in stack['servers']:
            self.member(name)
        where = {'p-1': 'hA', 'q-2': 'hA', 'L': 'hA',
                 'p-2': 'hB', 'q-1': 'hB', 'M': 'hB',
                 'C1': 'hC', 'C2': 'hC'}
        self.servers = {name: self.boot_on(self.admin_api, name, flavor, host)
                        for name, host in where.items()}
        for name in stack['servers']:
            self.member(name, self.servers[name]['id'])

    def member(self, name, instance=None):
        body = {'name': name}
        if instance:
            body['instance_uuid'] = instance
        self.call('POST', f'/stacks/{self.stack}/action',
                  {'boot_member': body}, headers=ADMIN)

    def audit(self):
        return self.call('GET', f'/stacks/{self.stack}/audit',
                         headers=ADMIN)['stack_audit']

    def test_a_bystander_opens_a_full_host_for_the_swap(self):
        self.assertEqual('violated', self.audit()['status'])
        ids = {s['id']: name for name, s in self.servers.items()}
        plan = self.call('POST', '/repairs', {'repair': {
            'stack': self.stack}}, headers=ADMIN)['repair']
        self.assertEqual('repaired', plan['status'], plan)
        moved = [(ids[m['server']], m['from'], m['to'])
                 for m in plan['moves']]
        self.assertEqual(3, len(moved), moved)
        # first L or M leaves for hC, then each pair joins on one host
        self.assertIn(moved[0], [('L', 'hA', 'hC'), ('M', 'hB', 'hC')])
        self.assertEqual(3, len({name for name, _, _ in moved}))
        resp = self.call('POST', '/repairs/apply', {'repair': {
            'stack': self.stack, 'fingerprint': plan['fingerprint'],
            'moves': plan['moves']}}, headers=ADMIN, expect=202)
        done = self.until_ended(resp['task']['id'])
        self.assertEqual('applied', done['status'], done)
        self.assertEqual('ok', self.audit()['status'])
        hosts = self.hosts()
        self.assertEqual(hosts['p-1'], hosts['p-2'])
        self.assertEqual(hosts['q-1'], hosts['q-2'])
        # Nova made one live migration of each server moved, no other
        self.assertEqual({self.servers[name]['id']: 1
                          for name, _, _ in moved},
                         dict(live_migrations(self.admin_api)))
