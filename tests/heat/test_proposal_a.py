"""OS::ScopedPolicies::Application (Proposal A) with the real Heat engine,
the real policy service and Placement (as test_resources.py, whose
services and plugin_dirs set-up this module shares).

The examples run whole: their ``OS::Nova::Server`` resources are mapped
by the environment's resource_registry to :class:`NovaServer`, which takes
the same properties and does what the scheduler does with the hints.
"""

import os

from heat.tests import common  # noqa: F401  (before heat.engine)
from heat.common import exception
from heat.common import template_format
from heat.engine import properties
from heat.engine import resource
from heat.engine import resources
from heat.tests import utils
from oslo_config import cfg

from tests.heat import test_resources as base

setUpModule = base.setUpModule
tearDownModule = base.tearDownModule

BOOTED = []
NOVA = {'OS::Nova::Server': 'Test::NovaServer'}


class NovaServer(resource.Resource):
    """Stands in for OS::Nova::Server: its properties as the examples give
    them; creating it boots its member of the decision (boot_member)."""

    properties_schema = {
        'name': properties.Schema(properties.Schema.STRING),
        'image': properties.Schema(properties.Schema.STRING),
        'flavor': properties.Schema(properties.Schema.STRING,
                                    required=True),
        'security_groups': properties.Schema(properties.Schema.LIST),
        'networks': properties.Schema(properties.Schema.LIST),
        'scheduler_hints': properties.Schema(properties.Schema.MAP),
    }

    def handle_create(self):
        hints = self.properties['scheduler_hints']
        status, body = base.api(
            'POST', f'/stacks/{hints["scoped_plan"]}/action',
            {'boot_member': {'name': hints['scoped_plan_member']}})
        assert status == 200, body
        BOOTED.append(hints['scoped_plan_member'])

    def handle_delete(self):
        return None


def example(name):
    with open(os.path.join(base.ROOT, 'examples', 'heat', name)) as handle:
        return handle.read()


TEMPLATE = '''
heat_template_version: 2021-04-16
resources:
  app:
    type: OS::ScopedPolicies::Application
    properties:
      name: app
      flavors:
      - {name: small, resources: {VCPU: 4, MEMORY_MB: 1024}}
      - {name: big, resources: {VCPU: 8}}
      groups: |
        id: root
        members:
        - id: web
          members: [{get_resource: web-1}, {get_resource: web-2}]
          policies:
          - {type: OS::AntiCoLocation, properties: {level: compute_node}}
          relationships:
          - related: {get_group: db}
            policies: [{type: OS::AntiCoLocation, properties: {level: rack}}]
        - id: db
          members: [{get_resource: db-a}]
  web-1:
    type: OS::Nova::Server
    properties:
      flavor: small
      scheduler_hints: {get_attr: [app, hints, web-1]}
  web-2:
    type: OS::Nova::Server
    properties:
      flavor: small
      scheduler_hints: {get_attr: [app, hints, web-2]}
  db-a:
    type: OS::Nova::Server
    properties:
      flavor: big
      scheduler_hints: {get_attr: [app, hints, db-a]}
'''
VOLUME = '''
  disk:
    type: OS::Cinder::Volume
    properties: {size: 1}
'''


class ApplicationTest(common.HeatTestCase):

    def setUp(self):
        super().setUp()
        base.as_member(self)
        cfg.CONF.set_override('endpoint_override', base.SERVICES['api'],
                              group='clients_scoped_policies')
        cfg.CONF.set_override('noauth', True,
                              group='clients_scoped_policies')
        resource._register_class('Test::NovaServer', NovaServer)
        BOOTED.clear()

    def stack(self, text, **params):
        return utils.parse_stack(
            template_format.parse(text),
            params={'parameters': params, 'resource_registry': NOVA})

    def decision(self, plan):
        status, body = base.api('GET', f'/stacks/{plan}')
        self.assertEqual(200, status, body)
        return body['stack']

    def refused(self, text, *expected):
        stack = self.stack(text)
        exc = self.assertRaises(exception.StackValidationFailed,
                                stack.validate)
        for part in expected:
            self.assertIn(part, str(exc))

    def test_loaded_from_plugin_dirs(self):
        info = resources.global_env().get_class(
            'OS::ScopedPolicies::Application')
        self.assertEqual('ScopedApplication', info.__name__)
        # the existing types are still there, unchanged
        self.assertEqual('ScopedStack', resources.global_env().get_class(
            'OS::ScopedPolicies::Stack').__name__)

    def test_groups_relationships_and_flavors_decide_then_delete(self):
        before = base.vcpus_used()
        stack = self.stack(TEMPLATE)
        stack.validate()
        stack.create()
        self.assertEqual((stack.CREATE, stack.COMPLETE), stack.state,
                         stack.status_reason)
        self.assertEqual({'web-1', 'web-2', 'db-a'}, set(BOOTED))
        decided = self.decision(stack['app'].resource_id)
        hosts = {n: s['host'] for n, s in decided['servers'].items()}
        racks = {h: r for r, hs in base.SERVICES['racks'].items()
                 for h in hs}
        self.assertNotEqual(hosts['web-1'], hosts['web-2'])
        for web in ('web-1', 'web-2'):
            self.assertNotEqual(racks[hosts['db-a']], racks[hosts[web]])
        self.assertEqual(before, base.vcpus_used())   # holds given back
        stack.delete()
        self.assertEqual((stack.DELETE, stack.COMPLETE), stack.state)
        self.assertEqual(before, base.vcpus_used())

    def test_ha_clusters_example(self):
        stack = self.stack(example('proposal-a-ha-clusters.yaml'),
                           image='appserver', network='private', ram=2048)
        stack.validate()
        stack.create()
        self.assertEqual((stack.CREATE, stack.COMPLETE), stack.state,
                         stack.status_reason)
        self.assertEqual(12, len(BOOTED))
        decided = self.decision(stack['placement'].resource_id)
        self.assertEqual('confirmed', decided['status'])
        racks = {h: r for r, hs in base.SERVICES['racks'].items()
                 for h in hs}
        for cluster in ('1', '2', '3'):
            hosts = [s['host'] for n, s in decided['servers'].items()
                     if n.startswith(f'M{cluster}')]
            # LLMN rack/host, N=2, M=4: one per host, at most two per rack,
            # at least two racks
            self.assertEqual(4, len(set(hosts)), hosts)
            per_rack = [racks[h] for h in hosts]
            self.assertGreaterEqual(len(set(per_rack)), 2, hosts)
            self.assertLessEqual(max(per_rack.count(r) for r in per_rack),
                                 2, hosts)
        stack.delete()
        self.assertEqual((stack.DELETE, stack.COMPLETE), stack.state)

    def test_hadoop_example(self):
        stack = self.stack(example('proposal-a-hadoop.yaml'),
                           network='private')
        stack.validate()
        self.assertEqual(
            ['soft-anti-affinity:host'],
            stack['placement'].document()['stack']['group']['members'][1][
                'policies'])
        stack.create()
        self.assertEqual((stack.CREATE, stack.COMPLETE), stack.state,
                         stack.status_reason)
        decided = self.decision(stack['placement'].resource_id)
        self.assertEqual('confirmed', decided['status'])
        datanodes = [s['host'] for n, s in decided['servers'].items()
                     if 'datanode' in n]
        self.assertEqual(4, len(set(datanodes)))    # the soft policy met
        stack.delete()
        self.assertEqual((stack.DELETE, stack.COMPLETE), stack.state)

    def test_network_and_volume_policies_are_refused_naming_the_type(self):
        for ptype in ('OS::NetMaxHops', 'OS::VolExclusive', 'OS::VolNotMoved'):
            self.refused(
                TEMPLATE.replace('{type: OS::AntiCoLocation, properties: '
                                 '{level: rack}}', f'{{type: {ptype}}}'),
                'resources.app.properties.groups.members[0].'
                'relationships[0].policies[0].type', ptype)
        self.refused(TEMPLATE.replace('OS::AntiCoLocation, properties: '
                                      '{level: compute_node}',
                                      'OS::NetMaxHops, properties: {hops: 0}'),
                     'groups.members[0].policies[0].type',
                     'OS::NetMaxHops', 'network policy')

    def test_a_volume_member_is_refused_naming_its_type(self):
        self.refused(TEMPLATE.replace('[{get_resource: db-a}]',
                                      '[{get_resource: db-a}, '
                                      '{get_resource: disk}]') + VOLUME,
                     'groups.members[1].members[1].get_resource',
                     'OS::Cinder::Volume')

    def test_a_model_error_names_the_proposal_a_field(self):
        # LLMN's N more than the group's servers: the stack model's error,
        # named where Proposal A wrote it
        self.refused(TEMPLATE.replace(
            '{type: OS::AntiCoLocation, properties: {level: compute_node}}',
            '{type: OS::LLMN, properties: {L1: rack, L2: PM, N: 3}}'),
            'resources.app.properties.groups.members[0].policies[0].'
            'properties.N', 'cannot spread 2 member(s)')

    def test_an_unknown_flavor_is_refused_naming_the_member(self):
        self.refused(TEMPLATE.replace('flavor: big', 'flavor: huge'),
                     'groups.members[1].members[0].get_resource',
                     'which flavors does not describe')

    def test_get_resource_in_a_property_would_be_a_loop(self):
        # why groups is text: parsed references make the decision depend on
        # the servers that depend on its hints
        text = TEMPLATE.replace(
            "      name: app\n",
            "      name: app\n      lease_seconds: {get_attr: [web-1, x]}\n")
        stack = self.stack(text)
        self.assertRaises(exception.CircularDependencyException,
                          stack.validate)
