"""``OS::ScopedPolicies::Application``: Proposal A of
heat-policy-extension.txt in a HOT template.

Its ``groups`` property is the spec's groups section as written (the root
Group: ``id``, ``members`` of groups and ``{get_resource: <server>}``,
``metadata``, ``policies`` ``{type, properties, metadata}``,
``relationships`` ``{related, policies}``), given as YAML or JSON text:
Heat makes every ``get_resource`` in a property a dependency, and the
servers depend on this resource for their hints, so parsed references
would be a dependency loop. ``flavors`` says what scheduling needs of each
Nova flavor the servers boot with; each server's own ``flavor`` property
picks its entry. :mod:`nova_scoped_policies.heat.proposal_a` turns it all
into a stack document; the rest is ``OS::ScopedPolicies::Stack``'s: the
validation (its errors, :class:`proposal_a.ProposalError` being a stack
error, name the property path), the decision on create, ``hints`` for each
server (by resource name), renew, replace and release.
"""

import typing

from heat.common.i18n import _
from heat.engine import constraints
from heat.engine import properties

from nova_scoped_policies.heat import proposal_a
from nova_scoped_policies.heat import resources

_STACK = resources.ScopedStack


class ScopedApplication(_STACK):
    """One joint decision for the servers of a Proposal A groups section.

    Give each server ``scheduler_hints: {get_attr: [<this resource>, hints,
    <the server's resource name>]}``.
    """

    PROPERTIES = (NAME, LEASE_SECONDS, GROUPS, FLAVORS) = (
        _STACK.NAME, _STACK.LEASE_SECONDS, 'groups', 'flavors')
    _FLAVOR_KEYS = (FLAVOR_NAME, FLAVOR_RESOURCES, FLAVOR_TRAITS) = (
        'name', 'resources', 'traits')

    properties_schema = {
        NAME: _STACK.properties_schema[_STACK.NAME],
        LEASE_SECONDS: _STACK.properties_schema[_STACK.LEASE_SECONDS],
        GROUPS: properties.Schema(
            properties.Schema.STRING,
            _('The groups section of heat-policy-extension.txt\'s Proposal '
              'A, as YAML or JSON text: the root group {id, members, '
              'metadata, policies, relationships}; members are groups or '
              '{get_resource: <an OS::Nova::Server of this template>}.'),
            required=True,
            constraints=[constraints.Length(1, proposal_a.MAX_TEXT)]),
        FLAVORS: properties.Schema(
            properties.Schema.LIST,
            _('What scheduling needs of each Nova flavor the servers boot '
              'with, found by the servers\' flavor property: {name, '
              'resources, traits}.'),
            required=True,
            constraints=[constraints.Length(1, 64)],
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    FLAVOR_NAME: properties.Schema(
                        properties.Schema.STRING,
                        _('The Nova flavor\'s name, as the servers give '
                          'it.'), required=True),
                    FLAVOR_RESOURCES: properties.Schema(
                        properties.Schema.MAP,
                        _('Resource class -> amount.'), required=True),
                    FLAVOR_TRAITS: properties.Schema(
                        properties.Schema.MAP,
                        _('required and forbidden traits.')),
                })),
    }

    def _template_resources(self) -> typing.Dict[
            str, proposal_a.TemplateResource]:
        """The stack's resources as the translator needs them: type, and
        for servers the flavor name as written (never looked up)."""
        found = {}
        for name, res in self.stack.items():
            flavor = None
            if res.type() == proposal_a.SERVER_TYPE and \
                    'flavor' in res.properties:
                flavor = res.properties.get_user_value('flavor')
            found[name] = proposal_a.TemplateResource(
                res.type(), flavor if isinstance(flavor, str) else None)
        return found

    def document(self, props=None) -> dict:
        props = props or self.properties
        document = {
            self.NAME: props[self.NAME],
            self.LEASE_SECONDS: props[self.LEASE_SECONDS],
            self.FLAVORS: [{k: v for k, v in flavor.items() if v is not None}
                           for flavor in props[self.FLAVORS]],
            self.GROUPS: proposal_a.load(props[self.GROUPS], self.GROUPS)}
        return proposal_a.validate(document, self._template_resources())


def resource_mapping():
    return {'OS::ScopedPolicies::Application': ScopedApplication}
