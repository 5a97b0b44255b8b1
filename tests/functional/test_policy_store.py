"""The real nova-scheduler reads scoped groups from the policy store.

Scopes and group policies are saved through the policy API (its
application called in-process, with the real Placement of the test);
nova-scheduler reads them with the ``sql`` store driver. No hint carries
policies here: the group hint alone makes the stored ones apply.
"""

import collections
import json

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from oslo_config import cfg
import requests
import webob

from nova.tests import fixtures as nova_fixtures
from nova_scoped_policies.api import deploy
from nova_scoped_policies.api import nova as nova_api
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration
from nova_scoped_policies.scheduler import stores
from tests.functional import base
from tests import placement_fixtures as pf

ADMIN = {'X-Project-Id': 'admin', 'X-Roles': 'admin'}


class StoredGroupTest(base.ScopedPoliciesTestCase):
    # the racks of the base class keep their aggregate metadata; zones
    # come only from the store
    ZONES = collections.OrderedDict([('zone-a', ['h1', 'h2', 'h3']),
                                     ('zone-b', ['h4', 'h5', 'h6'])])

    def setUp(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        self.url = f'sqlite:///{tmp}/store.db'
        self.store = store_api.PolicyStore(self.url)
        migration.upgrade(self.store.engine)
        self.addCleanup(self.store.engine.dispose)
        super().setUp()
        self.flags(store_driver='sql', store_cache_ttl=0,
                   group='scoped_policies')
        self.flags(connection=self.url, group='policy_store')
        conf = cfg.ConfigOpts()
        nsp_conf.register_opts(conf)
        conf([], default_config_files=[])
        conf.set_override('auth_strategy', 'noauth2',
                          group='scoped_policies_api')
        self.app = deploy.loadapp(conf, self.store,
                                  pf.client_for(self.placement_fixture),
                                  nova_api.NovaGroups(self._nova_adapter()))
        self.project = nova_fixtures.PROJECT_ID
        self.zone_of = {}
        self.zones = {}
        for zone, hosts in self.ZONES.items():
            # plain aggregates: nova mirrors their hosts into Placement
            self.zones[zone] = self.admin_api.post_aggregate(
                {'aggregate': {'name': zone}})['uuid']
            for host in hosts:
                agg = [a for a in self.admin_api.api_get(
                    '/os-aggregates').body['aggregates']
                    if a['name'] == zone][0]
                self.admin_api.add_host_to_aggregate(agg['id'], host)
                self.zone_of[host] = zone

    def _nova_adapter(self):
        """The compute API of the test, as the service's admin user."""
        http = requests.Session()
        http.trust_env = False
        session = ks_session.Session(session=http)
        api = self.admin_api
        return ks_adapter.Adapter(
            session, endpoint_override=api.base_url, additional_headers={
                'X-Auth-User': 'admin', 'X-User-Id': 'admin',
                'X-Auth-Project-Id': api.project_id,
                'X-Roles': 'reader,member,admin'})

    def call(self, method, path, body=None, headers=None):
        req = webob.Request.blank(path, method=method, headers=headers or {
            'X-Project-Id': self.project, 'X-Roles': 'member'})
        if body is not None:
            req.content_type = 'application/json'
            req.body = json.dumps(body).encode()
        resp = req.get_response(self.app)
        return resp.status_code, resp.json if resp.body else None

    def _zone_scope(self):
        status, body = self.call('POST', '/os-policy-scopes', {
            'policy_scope': {'name': 'zone',
                             'aggregates': sorted(self.zones.values())}},
            ADMIN)
        self.assertEqual(201, status, body)

    def test_stored_zone_anti_affinity_then_audit(self):
        self._zone_scope()
        group = self._group('anti-affinity')
        status, body = self.call('POST', '/os-server-groups', {
            'server_group': {'id': group['id'],
                             'policies': ['anti-affinity:zone']}})
        self.assertEqual(200, status, body)

        servers = [self._boot(group)[0] for _ in range(2)]
        self.assertEqual({'zone-a', 'zone-b'},
                         {self.zone_of[self.host_of(s)] for s in servers})
        failed = self._boot(group, expected='ERROR')[0]
        self.assertIn('No valid host', failed['fault']['message'])

        # the audit reads the members from nova (the failed boot is one,
        # with no allocations) and their allocations from the real Placement
        status, body = self.call(
            'GET', f'/os-server-groups/{group["id"]}/audit', headers=ADMIN)
        self.assertEqual(200, status, body)
        audit = {m['instance_id']: m['placements']['zone']
                 for m in body['server_group_policy_audit']['members']}
        expected = {s['id']: self.zones[self.zone_of[self.host_of(s)]]
                    for s in servers}
        expected[failed['id']] = None
        self.assertEqual(expected, audit)
        self.assertEqual([], body['server_group_policy_audit']['violations'])

        # an instance added through the API, in zone-a again: a violation
        extra = self._boot(None, host=self.ZONES[
            self.zone_of[self.host_of(servers[0])]][0])[0]
        status, body = self.call(
            'POST', f'/os-server-groups/{group["id"]}/action',
            {'add_instance': {'instance_id': extra['id']}})
        self.assertEqual(200, status, body)
        status, body = self.call(
            'GET', f'/os-server-groups/{group["id"]}/audit')
        audit = body['server_group_policy_audit']
        self.assertEqual(4, len(audit['members']))
        self.assertIn('anti-affinity:zone:', audit['violations'][0])
        self.assertIn('holds 2 of max 1', audit['violations'][0])

    def test_scoped_policies_need_the_nova_group(self):
        self._zone_scope()
        status, body = self.call('POST', '/os-server-groups', {
            'server_group': {'id': '00000000-0000-4000-8000-000000000999',
                             'policies': ['anti-affinity:zone']}})
        self.assertEqual((404, 'server group 00000000-0000-4000-8000-'
                          '000000000999 not found'),
                         (status, body['errors'][0]['detail']))
        group = self._group('anti-affinity')
        status, body = self.call('POST', '/os-server-groups', {
            'server_group': {'id': group['id'], 'project_id': 'another',
                             'policies': ['anti-affinity:zone']}}, ADMIN)
        self.assertEqual(400, status)
        self.assertIn('belongs to another project',
                      body['errors'][0]['detail'])
        # another project learns nothing of the group: answered as one
        # Nova does not have
        status, body = self.call('POST', '/os-server-groups', {
            'server_group': {'id': group['id'],
                             'policies': ['anti-affinity:zone']}},
            {'X-Project-Id': 'another', 'X-Roles': 'member'})
        self.assertEqual((404, f'server group {group["id"]} not found'),
                         (status, body['errors'][0]['detail']))

    def test_an_excluded_member_frees_its_rack(self):
        """remove_instance of a member Nova booted: Nova keeps it in its
        group, the scheduler no longer counts it, so the next boot into
        the anti-affinity:rack group may use its rack; add_instance counts
        it again."""
        racks = sorted(a['uuid'] for a in self.admin_api.api_get(
            '/os-aggregates').body['aggregates'] if a['name'] in self.RACKS)
        status, body = self.call('POST', '/os-policy-scopes', {
            'policy_scope': {'name': 'rack', 'aggregates': racks}}, ADMIN)
        self.assertEqual(201, status, body)
        group = self._group('soft-anti-affinity')
        action = f'/os-server-groups/{group["id"]}/action'
        status, body = self.call('POST', '/os-server-groups', {
            'server_group': {'id': group['id'],
                             'policies': ['anti-affinity:rack']}})
        self.assertEqual(200, status, body)
        servers = [self._boot(group)[0] for _ in self.RACKS]
        self.assertEqual(set(self.RACKS), set(self.racks_of(servers)))
        self._boot(group, expected='ERROR')    # every rack holds a member

        gone = servers[0]
        status, body = self.call('POST', action, {
            'remove_instance': {'instance_id': gone['id']}})
        self.assertEqual(200, status, body)
        self.assertEqual([gone['id']],
                         body['server_group']['excluded_members'])
        self.assertIn(gone['id'],
                      self.api.get_server_group(group['id'])['members'])
        server = self._boot(group)[0]
        self.assertEqual(self.rack_of[self.host_of(gone)],
                         self.rack_of[self.host_of(server)])
        status, body = self.call(
            'GET', f'/os-server-groups/{group["id"]}/audit')
        audit = body['server_group_policy_audit']
        self.assertNotIn(gone['id'],
                         [m['instance_id'] for m in audit['members']])
        self.assertEqual([], audit['violations'])

        status, body = self.call('POST', action, {
            'add_instance': {'instance_id': gone['id']}})
        self.assertEqual(200, status, body)
        self.assertEqual([], body['server_group']['excluded_members'])
        failed = self._boot(group, expected='ERROR')[0]
        self.assertIn('No valid host', failed['fault']['message'])

        # a member Nova booted joins no other group with scoped policies
        # (the service asks Nova which group the server is in)
        other = self._group('soft-anti-affinity')
        self.call('POST', '/os-server-groups', {'server_group': {
            'id': other['id'], 'policies': ['soft-anti-affinity:rack']}})
        status, body = self.call(
            'POST', f'/os-server-groups/{other["id"]}/action',
            {'add_instance': {'instance_id': servers[1]['id']}})
        self.assertEqual((409, f'instance {servers[1]["id"]} is a member '
                          'of a server group already'),
                         (status, body['errors'][0]['detail']))

    def test_members_added_through_the_api_count(self):
        self._zone_scope()
        outside = self._boot(None)[0]
        group = self._group('soft-anti-affinity')
        self.call('POST', '/os-server-groups', {'server_group': {
            'id': group['id'], 'policies': ['anti-affinity:zone']}})
        self.call('POST', f'/os-server-groups/{group["id"]}/action',
                  {'add_instance': {'instance_id': outside['id']}})
        server = self._boot(group)[0]
        self.assertNotEqual(self.zone_of[self.host_of(outside)],
                            self.zone_of[self.host_of(server)])

    def test_unreachable_store_fails_hard_groups_closed(self):
        self._zone_scope()
        hard = self._group('soft-anti-affinity')
        soft = self._group('soft-anti-affinity')
        self.call('POST', '/os-server-groups', {'server_group': {
            'id': hard['id'], 'policies': ['anti-affinity:zone']}})
        self.call('POST', '/os-server-groups', {'server_group': {
            'id': soft['id'], 'policies': ['soft-affinity:zone']}})
        self._boot(hard)
        self._boot(soft)
        # the database goes away
        driver = base.state.STATES.sources.store.driver
        driver.store = store_api.PolicyStore(
            'sqlite:////nonexistent/dir/store.db')
        failed = self._boot(hard, expected='ERROR')[0]
        self.assertIn('No valid host', failed['fault']['message'])
        self._boot(soft)
        unknown = self._group('anti-affinity')
        self._boot(unknown, expected='ERROR')
        self.assertIsInstance(driver, stores.PolicyStoreDriver)
