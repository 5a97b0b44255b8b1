"""``/os-policy-scopes``: scopes and their domains.

Administrators make and change scopes; anyone lists them, and a tenant
sees a scope's domains in its own identifiers when the scope obfuscates
them. Every scope and aggregate a test makes is deleted after it.
"""

from tempest.lib.common.utils import data_utils
from tempest.lib.common.utils import test_utils
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_scoped_policies.tempest.tests import base


class ScopesBase(base.ScopedPoliciesTest):
    """Scopes and aggregates made for a test, deleted after it."""

    def _aggregate(self) -> str:
        """A new host aggregate (no host); its uuid."""
        aggregate = self.admin.aggregates.create_aggregate(
            name=data_utils.rand_name(prefix=base.CONF.resource_name_prefix,
                                      name='nsp-aggregate'))['aggregate']
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        self.admin.aggregates.delete_aggregate,
                        aggregate['id'])
        return aggregate['uuid']

    def _scope(self, **options) -> dict:
        options.setdefault('name', data_utils.rand_name(
            prefix=base.CONF.resource_name_prefix, name='nsp-scope'))
        scope = self.admin.scopes.create_scope(**options)['policy_scope']
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        self.admin.scopes.delete_scope, scope['uuid'])
        return scope


class ScopesTest(ScopesBase):
    """Scopes, as an administrator and as tenants."""

    @decorators.idempotent_id('22577c6f-8da8-47f5-8ea0-0e42c22b3f04')
    def test_the_scope_under_test_is_listed_to_tenants(self):
        self.require_scope()
        names = [s['name'] for s in
                 self.primary.scopes.list_scopes()['policy_scopes']]
        self.assertIn(self.scope_name(), names)
        shown = self.primary.scopes.show_scope(self.scope_name())
        self.assertEqual(self.scope_name(), shown['policy_scope']['name'])

    @decorators.idempotent_id('a1f6d1ba-d2b7-4c4c-815c-0fa1d88ce2cd')
    def test_its_domains_are_nova_aggregates(self):
        self.require_scope()
        scope = self.admin.scopes.show_scope(
            self.scope_name())['policy_scope']
        aggregates = {a['uuid'] for a in self.admin.aggregates.list_aggregates(
        )['aggregates']}
        self.assertLessEqual(set(scope['aggregates']), aggregates)

    @decorators.idempotent_id('26d7294a-7da8-4ebb-80ab-d46a8c95138e')
    def test_create_change_and_delete_a_scope(self):
        first, second = self._aggregate(), self._aggregate()
        scope = self._scope(aggregates=[first])
        self.assertEqual([first], scope['aggregates'])
        self.assertIn('obfuscate_namespace_uuid', scope)

        changed = self.admin.scopes.update_scope(
            scope['uuid'], allow_identifiers=True)['policy_scope']
        self.assertTrue(changed['allow_identifiers'])

        self.admin.scopes.add_aggregate(scope['uuid'], second)
        self.admin.scopes.remove_aggregate(scope['uuid'], first)
        shown = self.admin.scopes.show_scope(scope['name'])['policy_scope']
        self.assertEqual([second], shown['aggregates'])

        self.admin.scopes.delete_scope(scope['uuid'])
        self.assertRaises(lib_exc.NotFound, self.admin.scopes.show_scope,
                          scope['uuid'])

    @decorators.idempotent_id('032d6f3c-ea5b-418c-aa41-e7553e2319e4')
    def test_each_tenant_sees_its_own_identifiers(self):
        aggregate = self._aggregate()
        scope = self._scope(aggregates=[aggregate], allow_identifiers=True,
                            obfuscate_identifiers=True)
        mine = self.primary.scopes.show_scope(scope['uuid'])['policy_scope']
        theirs = self.alt.scopes.show_scope(scope['uuid'])['policy_scope']
        self.assertNotIn('obfuscate_namespace_uuid', mine)
        self.assertEqual(1, len(mine['aggregates']))
        self.assertNotIn(aggregate, mine['aggregates'] + theirs['aggregates'])
        self.assertNotEqual(mine['aggregates'], theirs['aggregates'])


class ScopesNegativeTest(ScopesBase):
    """What the scopes API refuses."""

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('4e4b24a2-0f0f-4455-a819-5a21b9111024')
    def test_a_tenant_cannot_create_a_scope(self):
        self.assertRaises(lib_exc.Forbidden, self.primary.scopes.create_scope,
                          name=data_utils.rand_name('nsp-scope'))

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('c9545017-becf-4f3f-b839-47c1f28c9a2c')
    def test_a_tenant_cannot_change_or_delete_a_scope(self):
        scope = self._scope()
        self.assertRaises(lib_exc.Forbidden, self.primary.scopes.update_scope,
                          scope['uuid'], allow_identifiers=True)
        self.assertRaises(lib_exc.Forbidden, self.primary.scopes.delete_scope,
                          scope['uuid'])
        self.admin.scopes.show_scope(scope['uuid'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('af7f39a2-b718-40f6-b2dc-20b67ee79097')
    def test_an_unknown_scope_is_404(self):
        self.assertRaises(lib_exc.NotFound, self.primary.scopes.show_scope,
                          data_utils.rand_name('nsp-no-such-scope'))

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('be103c32-424c-4a6d-9317-9774c4ad09e6')
    def test_a_bad_body_is_400_naming_the_field(self):
        exc = self.assertRaises(lib_exc.BadRequest,
                                self.admin.scopes.create_scope,
                                name=data_utils.rand_name('nsp-scope'),
                                aggregates=['not-a-uuid'])
        self.assertDetail(exc, 'policy_scope.aggregates[0]')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('c94e4a92-20fc-4aa8-b81b-b11609e95a4f')
    def test_a_name_taken_is_409(self):
        scope = self._scope()
        self.assertRaises(lib_exc.Conflict, self.admin.scopes.create_scope,
                          name=scope['name'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('d1647f6d-fd8e-406f-8b17-1f6baceb10f4')
    def test_an_aggregate_is_a_domain_of_one_scope_only(self):
        aggregate = self._aggregate()
        self._scope(aggregates=[aggregate])
        self.assertRaises(lib_exc.Conflict, self.admin.scopes.create_scope,
                          name=data_utils.rand_name('nsp-scope'),
                          aggregates=[aggregate])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('4a33b415-8534-49b5-b77a-8a98d109db13')
    def test_a_scope_a_group_uses_cannot_be_deleted(self):
        scope = self._scope(aggregates=[self._aggregate()])
        self.create_group(self.primary, [f'anti-affinity:{scope["name"]}'])
        self.assertRaises(lib_exc.Conflict, self.admin.scopes.delete_scope,
                          scope['uuid'])

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('fdcc7409-56a0-4a3f-bcf3-82516d9b1ac5')
    def test_an_unknown_microversion_is_406(self):
        client = self.at_microversion(self.primary.scopes, '9.99')
        self.assertRaises(lib_exc.NotAcceptable, client.list_scopes)
