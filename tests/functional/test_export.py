"""An export of the real nova + Placement cloud, simulated, audits as the
cloud does (issue 34).

Three racks of hosts; project A's group ``g`` (anti-affinity:host, then
tightened to anti-affinity:rack: two of its servers share rack-1) and a
server added to it through the policy API in rack-2 beside another of
its members; another project's group ``k`` (anti-affinity:rack, kept),
a plain Nova group and servers in no group, one of them of the same
name as one of g's. ``GET /export`` (microversion 1.5) read with
``[nova]`` configured is simulated in-process with no request, and the
simulator's audit of every scoped group equals the live one's (``GET
/os-server-groups/{id}/audit``), violations included. A resilience
sweep of the export (each rack in turn) then says which racks g cannot
lose.

The export also writes nova-scheduler's options (read from the nova.conf
``[scoped_policies_api] scheduler_config_files`` names, here written from
the test's own scheduler options), each host's inventories as Placement
holds them (allocation ratios, units) and the capacity stacks hold: the
simulator's Placement holds what the cloud's does, host by host.
"""

import collections
import datetime
import json
import os
import re
from unittest import mock

import fixtures
from oslo_config import cfg

from nova_scoped_policies.placement import fake
from nova_scoped_policies.placement import holds
from nova_scoped_policies.simulator import fast
from nova_scoped_policies.simulator import scenario as sc
from tests.functional import test_repairs
from tests.functional import test_stack_boots as stack_boots

ADMIN = stack_boots.ADMIN
OTHER = test_repairs.OTHER
CONF = cfg.CONF


class ExportTest(stack_boots.StackCloud):

    RACKS = collections.OrderedDict([
        ('rack-1', ['h11', 'h12']), ('rack-2', ['h21', 'h22']),
        ('rack-3', ['h31'])])
    VERSION = 'scoped-policies 1.5'

    nova_client = test_repairs.RepairCloud.nova_client
    group = test_repairs.FullCloudRepairTest.group
    boot_on = test_repairs.FullCloudRepairTest.boot_on
    flavor_of = test_repairs.FullCloudRepairTest.flavor_of
    other_api = test_repairs.FullCloudRepairTest.other_api

    def start_service(self, name, *args, **kwargs):
        if name == 'compute':
            # a ratio and a reserved amount Placement applies
            self.flags(cpu_allocation_ratio=2.0, ram_allocation_ratio=1.5,
                       reserved_host_memory_mb=512)
        return super().start_service(name, *args, **kwargs)

    def setUp(self):
        super().setUp()
        other = self.other_api()
        small = self.flavor_of('s.small', 1, 512)
        big = self.flavor_of('s.big', 2, 2048)
        self.g = self.group(self.api, self.project, 'g',
                            'soft-anti-affinity', ['anti-affinity:host'])
        self.k = self.group(other, OTHER, 'k', 'anti-affinity',
                            ['anti-affinity:rack'])
        plain = self.api.post_server_groups({'name': 'p',
                                             'policy': 'anti-affinity'})
        self.servers = {
            'g1': self.boot_on(self.admin_api, 'web', small, 'h11', self.g),
            'g2': self.boot_on(self.admin_api, 'g2', big, 'h12', self.g),
            'g3': self.boot_on(self.admin_api, 'g3', small, 'h21', self.g),
            'k1': self.boot_on(other, 'k1', big, 'h22', self.k),
            'k2': self.boot_on(other, 'k2', small, 'h31', self.k),
            'p1': self.boot_on(self.admin_api, 'p1', small, 'h31',
                               plain['id']),
            'lone': self.boot_on(self.admin_api, 'lone', big, 'h21'),
            # another project's server of the same name as g1
            'web': self.boot_on(other, 'web', small, 'h12')}
        # the tenant tightens g: g1 and g2 share rack-1
        self.call('POST', f'/os-server-groups/{self.g}', {'server_group': {
            'policies': ['anti-affinity:rack']}})
        # and adds a server of rack-2 beside g3: a second violation
        self.call('POST', f'/os-server-groups/{self.g}/action', {
            'add_instance': {'instance_id': self.servers['lone']['id']}})
        # h31 reserved to requests that require a trait (forbidden
        # aggregates), once every server runs
        self._make_aggregate('win', ['h31'],
                             {'trait:CUSTOM_WINDOWS_LICENSED': 'required',
                              'other': 'not read'})
        self.conf.set_override('scheduler_config_files',
                               [self.nova_conf()],
                               group='scoped_policies_api')
        # the option's group is a module's, shared by every ConfigOpts
        # it is registered on: the override is this test's only
        self.addCleanup(self.conf.clear_override, 'scheduler_config_files',
                        group='scoped_policies_api')

    def nova_conf(self):
        """nova-scheduler's nova.conf in this test: its options as the
        test set them, and one the simulator holds at one value."""
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'nova.conf')
        scheduler = CONF.filter_scheduler
        forbidden = CONF.scoped_policies.enable_forbidden_aggregates_filter
        lines = ['[DEFAULT]', 'debug = true', '[filter_scheduler]']
        lines += [f'available_filters = {f}'
                  for f in scheduler.available_filters]
        lines += [f'enabled_filters = {",".join(scheduler.enabled_filters)}',
                  f'weight_classes = {",".join(scheduler.weight_classes)}',
                  'ram_weight_multiplier = -1.5', 'host_subset_size = 3',
                  '[scoped_policies]',
                  f'enable_forbidden_aggregates_filter = {forbidden}',
                  'soft_anti_affinity_weight_multiplier = 4.0']
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write('\n'.join(lines) + '\n')
        return path

    def live_audit(self, group):
        return self.call('GET', f'/os-server-groups/{group}/audit',
                         headers=ADMIN)['server_group_policy_audit']

    def export(self, query=''):
        return self.call('GET', f'/export{query}', headers=ADMIN)

    def simulate(self, document):
        """The export with no request, through the simulator (fast
        engine, embedded Placement), in this process; the document is
        read back from JSON as a file of it would be."""
        scenario = sc.parse(json.loads(json.dumps(document)))
        return fast.FastSimulation(scenario, fake.FakePlacement()).run()

    def aggregate_names(self):
        return {a['uuid']: a['name'] for a in self.admin_api.api_get(
            '/os-aggregates').body['aggregates']}

    def exported_names(self, clash=True):
        """instance uuid -> its name in an export: its Nova name (the key
        of ``servers`` but for g1, named web), ``web-<8 hex>`` for both
        servers named web when both are named."""
        found = {s['id']: s['name'] for s in self.servers.values()}
        if clash:
            for key in ('g1', 'web'):
                uuid = self.servers[key]['id']
                found[uuid] = 'web-' + uuid.replace('-', '')[:8]
        return found

    @staticmethod
    def worded(violations, names=None):
        """Violations with every uuid of ``names`` (aggregates, instances)
        replaced by its name, the members a violation lists in the
        parentheses that end it sorted: an admin's live audit names
        domains by uuid and members by instance uuid, the simulator
        names both as the scenario does."""
        found = []
        for line in violations:
            if names:
                line = re.sub('|'.join(map(re.escape, names)),
                              lambda m: names[m.group(0)], line)
            head, paren, members = line.rpartition(' (')
            if paren and members.endswith(')'):
                line = f'{head} (' + ', '.join(sorted(
                    members[:-1].split(', '))) + ')'
            found.append(line)
        return sorted(found)

    def simulated_placement(self, document):
        """The export's world in the simulator's Placement, built (every
        server running and hold held), no request run."""
        scenario = sc.parse(json.loads(json.dumps(document)))
        simulation = fast.FastSimulation(scenario, fake.FakePlacement())
        simulation.build()
        return scenario, simulation.hosts.placement

    def assert_same_placement(self, document):
        """Host by host, the simulator's Placement holds the cloud's
        inventories (what they allocate: total, reserved, ratio, units)
        and usages (every instance and hold)."""
        scenario, model = self.simulated_placement(document)
        for host in scenario.hosts:
            rp = self._get_provider_uuid_by_host(host.name)
            real = self.placement_client.request(
                'GET', f'/resource_providers/{rp}/inventories').json()[
                    'inventories']
            simulated = model.providers[host.uuid].inventories
            self.assertEqual(set(real), set(simulated), host.name)
            for rc, inventory in real.items():
                capacity = int((inventory['total'] - inventory['reserved'])
                               * inventory['allocation_ratio'])
                found = simulated[rc]
                self.assertEqual(
                    (inventory['total'], inventory['reserved'],
                     inventory['allocation_ratio'], inventory['min_unit'],
                     inventory['step_size'],
                     min(inventory['max_unit'], capacity)),
                    (found['total'], found['reserved'],
                     found['allocation_ratio'], found['min_unit'],
                     found['step_size'], min(found['max_unit'], capacity)),
                    (host.name, rc))
            usages = self.placement_client.request(
                'GET', f'/resource_providers/{rp}/usages').json()['usages']
            self.assertEqual({rc: n for rc, n in usages.items() if n},
                             {rc: n for rc, n in model.used(
                                 host.uuid).items() if n}, host.name)

    def test_the_export_audits_as_the_cloud_does(self):
        document = self.export()
        # hosts with Placement's inventories: totals, reserved, ratios
        h11 = next(h for h in document['hosts'] if h['name'] == 'h11')
        inventory = self.placement_client.request(
            'GET', '/resource_providers/'
            f'{self._get_provider_uuid_by_host("h11")}/inventories'
        ).json()['inventories']
        self.assertEqual(inventory['MEMORY_MB']['total'],
                         h11['resources']['MEMORY_MB'])
        self.assertEqual(512, h11['reserved']['MEMORY_MB'])
        self.assertEqual(
            {'VCPU': {'allocation_ratio': 2.0,
                      'max_unit': inventory['VCPU']['max_unit']},
             'MEMORY_MB': {'allocation_ratio': 1.5,
                           'max_unit': inventory['MEMORY_MB']['max_unit']}},
            h11['inventory'])
        self.assert_same_placement(document)
        # nova-scheduler's options, as its nova.conf sets them
        config = document['config']
        self.assertEqual(
            {'enabled_filters': CONF.filter_scheduler.enabled_filters,
             'weight_classes': CONF.filter_scheduler.weight_classes,
             'available_filters': CONF.filter_scheduler.available_filters,
             'ram_weight_multiplier': -1.5},
            {k: config['filter_scheduler'][k] for k in (
                'enabled_filters', 'weight_classes', 'available_filters',
                'ram_weight_multiplier')})
        # which the simulator holds at 1: left out
        self.assertNotIn('host_subset_size', config['filter_scheduler'])
        self.assertEqual(
            (CONF.scoped_policies.enable_forbidden_aggregates_filter, 4.0),
            (config['enable_forbidden_aggregates_filter'],
             config['soft_anti_affinity_weight_multiplier']))
        self.assertEqual(sc.parse(json.loads(json.dumps(
            document))).nova_config['enabled_filters'],
            CONF.filter_scheduler.enabled_filters)
        servers = {s['name']: s for s in document['servers']}
        # names: unique; g1 and the other project's web share a name
        ids = {name: s['id'] for name, s in self.servers.items()}
        self.assertEqual(
            {'web-' + ids['g1'].replace('-', '')[:8],
             'web-' + ids['web'].replace('-', '')[:8],
             'g2', 'g3', 'k1', 'k2', 'p1', 'lone'}, set(servers))
        g1 = servers['web-' + ids['g1'].replace('-', '')[:8]]
        self.assertEqual(('h11', self.project, 'g'),
                         (g1['host'], g1['project'], g1['group']))
        # resources of the allocation
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 1},
                         servers['g2']['flavor']['resources'])
        self.assertEqual('g', servers['lone']['group'])
        self.assertEqual('p', servers['p1']['group'])
        groups = {g['name']: g for g in document['groups']}
        self.assertEqual(['anti-affinity:rack'], groups['g']['policies'])
        self.assertEqual(['anti-affinity:host'], groups['p']['policies'])
        racks = {a['name']: a for a in document['aggregates']}
        self.assertEqual(['h11', 'h12'], racks['rack-1']['hosts'])
        self.assertEqual('rack', racks['rack-1']['scope'])
        self.assertEqual(
            {'hosts': ['h31'], 'metadata': {
                'trait:CUSTOM_WINDOWS_LICENSED': 'required'}},
            {k: v for k, v in racks['win'].items()
             if k in ('hosts', 'metadata', 'scope')})

        result = self.simulate(document)
        names = dict(self.aggregate_names(), **self.exported_names())
        for name, group in (('g', self.g), ('k', self.k)):
            live = self.live_audit(group)
            simulated = result['audit'][name]
            self.assertEqual(
                self.worded(live['violations'], names),
                self.worded(simulated['violations']), name)
            self.assertEqual(len(live['members']),
                             len(simulated['members']), name)
        self.assertEqual(2, len(result['audit']['g']['violations']))
        self.assertEqual([], result['audit']['k']['violations'])
        # nothing was placed or moved: the world as it is
        self.assertEqual([], result['placements'])

        # then a resilience sweep of the export: each rack in turn. g
        # has a member in rack-3 and two in each other rack: losing
        # rack-1 or rack-2 leaves one of them no legal host; k (one
        # member in rack-2, one in rack-3) always finds rack-1
        document['requests'] = [{'resilience': {'fail': 'rack'}}]
        (sweep,) = self.simulate(document)['resilience']
        self.assertEqual((3, 1), (sweep['cases'], sweep['survived']))
        self.assertEqual({'g': {'broken_in': 2, 'of': 3}}, sweep['groups'])
        members = {s['name'] for s in document['servers']
                   if s.get('group') == 'g'}
        for case, rack in zip(sweep['broken'], ('rack-1', 'rack-2')):
            self.assertEqual([rack], case['domains'])
            (unplaced,) = case['unplaced']
            self.assertIn(unplaced, members)
            self.assertIn(f'no legal host for {unplaced}',
                          case['groups']['g'][0])
        self.assertEqual(set(self.RACKS), set(sweep['headroom']))

    def test_the_export_reads_placement_a_bounded_number_of_times(self):
        """Two reads per resource provider (inventories, allocations),
        one per trait in use and one per scope aggregate: none per
        server Nova lists, none more per host. A consumer Nova does not
        list (a stack's hold here) is read alone, and left out: it is no
        server."""
        h31 = self._get_provider_uuid_by_host('h31')
        decision = {'s1': (h31, {'VCPU': 1, 'MEMORY_MB': 256})}
        hold = holds.write(self.placement_client, holds.new(
            decision, self.project, 'u', datetime.datetime(2100, 1, 1)),
            decision).consumers['s1']
        calls = []
        request = self.placement_client.request

        def counted(method, url, *args, **kwargs):
            calls.append((method, url))
            return request(method, url, *args, **kwargs)

        with mock.patch.object(self.placement_client, 'request', counted):
            document = self.export()
        providers = [p['uuid'] for p in self.placement_client.list_providers()]
        traits = request('GET', '/traits?associated=true').json()['traits']
        self.assertEqual(5, len(providers))
        # nova-compute's traits: one listing each, whatever the hosts
        self.assertIn('COMPUTE_NODE', traits)
        kinds = collections.Counter()
        for method, url in calls:
            self.assertEqual('GET', method, url)
            path, _, query = url.partition('?')
            for rp in providers:
                path = path.replace(rp, '{uuid}')
            path = path.replace(hold, '{hold}')
            kinds[path, query.partition('=')[0]] += 1
        self.assertEqual({
            ('/resource_providers', ''): 1,
            ('/resource_providers', 'member_of'): len(self.RACKS),
            ('/traits', 'associated'): 1,
            ('/resource_providers', 'required'): len(traits),
            ('/resource_providers/{uuid}/inventories', ''): len(providers),
            ('/resource_providers/{uuid}/allocations', ''): len(providers),
            ('/allocations/{hold}', ''): 1,
        }, dict(kinds))
        self.assertEqual(8, len(document['servers']))
        self.assertNotIn(hold, json.dumps(document))
        # the hold is capacity held, of no stored stack
        self.assertEqual([{'host': 'h31', 'project': self.project,
                           'resources': {'MEMORY_MB': 256, 'VCPU': 1}}],
                         document['holds'])
        self.assert_same_placement(document)
        # every trait a host has, written
        written = next(h for h in document['hosts'] if h['name'] == 'h31')
        self.assertEqual(sorted(request(
            'GET', f'/resource_providers/{h31}/traits').json()['traits']),
            written['traits'])

    def test_nova_is_read_page_by_page(self):
        nova = self.nova_client()
        everyone = {s['id'] for s in self.servers.values()}
        for page in (3, 8, 1000):
            listed = [s['id'] for s in nova.all_servers(page=page)]
            self.assertEqual(sorted(everyone), sorted(listed), page)
            groups = [g['id'] for g in nova.all_groups(page=2)]
            self.assertEqual(3, len(set(groups)))
            self.assertEqual(len(groups), len(set(groups)))

    def test_a_project_export_and_an_obfuscated_one(self):
        mine = self.export(f'?project={self.project}')
        text = json.dumps(mine)
        for secret in (OTHER, '"k"', '"k1"', self.k,
                       self.servers['web']['id'][:8]):
            self.assertNotIn(secret, text)
        load = [s for s in mine['servers'] if s['name'].startswith('load-')]
        self.assertEqual(3, len(load))
        self.assertEqual(8, len(mine['servers']))
        # g1 is alone with its name in its project's export
        self.assertIn('web', {s['name'] for s in mine['servers']})
        result = self.simulate(mine)
        names = self.aggregate_names()
        self.assertEqual(
            self.worded(self.live_audit(self.g)['violations'], dict(
                names, **self.exported_names(clash=False))),
            self.worded(result['audit']['g']['violations']))

        hidden = self.export('?obfuscate=true')
        text = json.dumps(hidden)
        for real in ('"h11"', 'rack-1', self.project, OTHER, '"web"',
                     '"g"', *names):
            self.assertNotIn(real, text)
        self.assertEqual(hidden, self.export('?obfuscate=true'))
        # the same violations (g's two), in surrogates
        result = self.simulate(hidden)
        self.assertEqual([0, 0, 2], sorted(
            len(a['violations']) for a in result['audit'].values()))

    def test_held_capacity_is_exported_and_held(self):
        """A stack decided through the policy API holds capacity: the
        export writes each hold with its stack and server, as the
        exported stack names them, and the simulator holds it in its
        Placement; another project's export keeps it as load."""
        flavor = {'resources': {'VCPU': 1, 'MEMORY_MB': 256}}
        stack = self.call('POST', '/stacks', {'stack': {
            'name': 'app', 'lease_seconds': 600, 'group': {
                'name': 'root', 'policies': ['anti-affinity:rack'],
                'servers': {'count': 2, 'flavor': flavor}}}},
            expect=201)['stack']
        decided = self.call('GET', f'/stacks/{stack["id"]}',
                            headers=ADMIN)['stack']['servers']
        document = self.export()
        self.assertEqual(sorted(
            ({'host': decided[s]['host'], 'project': self.project,
              'resources': {'MEMORY_MB': 256, 'VCPU': 1},
              'stack': 'app', 'server': s} for s in ('root-1', 'root-2')),
            key=lambda h: h['host']), document['holds'])
        self.assert_same_placement(document)
        # a decision of the simulated stack reads the held capacity as
        # taken, and the holds stay for the whole run
        result = self.simulate(dict(document, requests=[
            {'plan': {'stack': 'app'}}]))
        self.assertEqual('reserved', result['plans']['app']['status'])

        theirs = self.export(f'?project={OTHER}')
        self.assertEqual(sorted((
            {'host': decided[s]['host'], 'resources': {
                'MEMORY_MB': 256, 'VCPU': 1}} for s in decided),
            key=lambda h: h['host']), theirs['holds'])
        self.assert_same_placement(theirs)
        hidden = self.export('?obfuscate=true')
        (app,) = hidden['stacks']
        servers = {f'{app["group"]["name"]}-{i}' for i in (1, 2)}
        self.assertEqual(servers, {h['server'] for h in hidden['holds']})
        self.assertEqual({app['name']}, {h['stack'] for h in hidden['holds']})
        self.simulate(hidden)
