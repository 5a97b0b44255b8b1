"""``GET /export`` (microversion 1.5, administrators): the live cloud as a
simulator scenario, whole or one project's, obfuscated or not."""

from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_scoped_policies.tempest.tests import base


class ExportTest(base.ScopedPoliciesTest):
    """What an export holds."""

    min_microversion = '1.5'
    scope_needed = True

    def _groups(self):
        return (self.create_group(self.primary, [self.policy]),
                self.create_group(self.alt, [self.policy]))

    @decorators.idempotent_id('db4b5ded-c607-4975-928d-45cb916d2071')
    def test_the_export_holds_the_scope_and_every_group(self):
        mine, theirs = self._groups()
        scenario = self.admin.export.export()
        self.assertIn(self.scope_name(), scenario['scopes'])
        scope = self.admin.scopes.show_scope(
            self.scope_name())['policy_scope']
        exported = {a['uuid'] for a in scenario['aggregates']
                    if a.get('scope') == self.scope_name()}
        self.assertEqual(set(scope['aggregates']), exported)
        self.assertTrue(scenario['hosts'])
        projects = {g['project'] for g in scenario['groups']}
        self.assertLessEqual({self.primary.project_id, self.alt.project_id},
                             projects)

    @decorators.idempotent_id('42168e73-e004-4c23-91fd-bce620b9d02d')
    def test_one_projects_export_names_only_its_own(self):
        self._groups()
        scenario = self.admin.export.export(project=self.primary.project_id)
        projects = {g.get('project') for g in scenario['groups']}
        self.assertEqual({self.primary.project_id}, projects)
        for server in scenario['servers']:
            self.assertIn(server.get('project'),
                          (None, self.primary.project_id))

    @decorators.idempotent_id('0cb42c6b-3697-4b3e-b1ad-b6adc590c935')
    def test_an_obfuscated_export_hides_names(self):
        self._groups()
        scenario = self.admin.export.export(obfuscate='true')
        names = {h['name'] for h in scenario['hosts']}
        services = {s['host'] for s in self.admin.services.list_services(
            binary='nova-compute')['services']}
        self.assertFalse(names & services)
        projects = {g.get('project') for g in scenario['groups']}
        self.assertNotIn(self.primary.project_id, projects)

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('1ba5e58b-3e03-4e22-82b8-3f99172c7804')
    def test_a_tenant_may_not_export(self):
        self.assertRaises(lib_exc.Forbidden, self.primary.export.export)

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('e4fe4424-61a6-462f-9d4b-81ff2c6be360')
    def test_a_bad_parameter_is_400_naming_it(self):
        exc = self.assertRaises(lib_exc.BadRequest, self.admin.export.export,
                                obfuscate='maybe')
        self.assertDetail(exc, 'obfuscate')
        self.assertRaises(lib_exc.BadRequest, self.admin.export.export,
                          colour='blue')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('e6170725-e646-4065-82f5-292787824b09')
    def test_export_needs_microversion_1_5(self):
        client = self.at_microversion(self.admin.export, '1.4')
        self.assertRaises(lib_exc.NotFound, client.export)
