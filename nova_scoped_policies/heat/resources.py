"""``OS::ScopedPolicies::Stack`` and ``OS::ScopedPolicies::Confirm``.

Put this module (or the ``nova_scoped_policies`` package) where Heat's
``plugin_dirs`` finds it; its :func:`resource_mapping` names the types.

* ``OS::ScopedPolicies::Stack`` (define + decide): its properties are the
  stack document's keys; creating it decides the whole stack and holds it
  (``POST /stacks``); its ``hints`` attribute gives each server its
  scheduler hints (``{get_attr: [plan, hints, web-1]}``); deleting it
  releases everything (``DELETE``). A changed ``lease_seconds`` renews the
  lease; any other change needs a new decision and replaces the resource.
* ``OS::ScopedPolicies::Confirm`` (confirm): created after the servers
  (``depends_on``), it releases the holds of servers never booted.

Heat's convergence engine calls no stack lifecycle plugins, so a stack
whose servers fail keeps its holds until the lease ends or the Heat stack
is deleted.
"""

from heat.common import exception
from heat.common.i18n import _
from heat.engine import attributes
from heat.engine import constraints
from heat.engine import properties
from heat.engine import resource
from heat.engine import support

from nova_scoped_policies.heat import client
from nova_scoped_policies.stacks import model

CLIENT = 'scoped_policies'


def _error(exc: client.APIError) -> exception.Error:
    return exception.Error(str(exc))


class ScopedStack(resource.Resource):
    """One joint placement decision for a group of groups, held in
    Placement under a lease until its servers are built."""

    support_status = support.SupportStatus(version='27.0.0')
    default_client_name = CLIENT

    PROPERTIES = (NAME, LEASE_SECONDS, GROUP, RELATIONSHIPS) = (
        'name', 'lease_seconds', 'group', 'relationships')
    ATTRIBUTES = (PLAN_ID, HINTS, SERVERS, STATUS) = (
        'plan_id', 'hints', 'servers', 'status')

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            _('The stack decision\'s name.'),
            required=True,
            constraints=[constraints.Length(1, 64)]),
        LEASE_SECONDS: properties.Schema(
            properties.Schema.INTEGER,
            _('How long the decision is held before its servers are '
              'built.'),
            default=model.DEFAULT_LEASE_SECONDS,
            constraints=[constraints.Range(1, model.MAX_LEASE_SECONDS)],
            update_allowed=True),
        GROUP: properties.Schema(
            properties.Schema.MAP,
            _('The root group: name, policies, rules, llmn, and members '
              '(groups) or servers (count or names, and a flavor).'),
            required=True),
        RELATIONSHIPS: properties.Schema(
            properties.Schema.LIST,
            _('Policies between groups, or with existing servers and '
              'server groups: {from, to, policies}.'),
            default=[]),
    }
    attributes_schema = {
        PLAN_ID: attributes.Schema(_('The decision id (the scoped_plan '
                                     'hint).'),
                                   type=attributes.Schema.STRING),
        HINTS: attributes.Schema(_('Server name -> its scheduler hints.'),
                                 type=attributes.Schema.MAP),
        SERVERS: attributes.Schema(_('Server name -> host (a surrogate '
                                     'for tenants) and state.'),
                                   type=attributes.Schema.MAP),
        STATUS: attributes.Schema(_('reserved or confirmed.'),
                                  type=attributes.Schema.STRING),
    }

    def document(self, props=None) -> dict:
        """The stack document the properties make (``OS::ScopedPolicies::
        Application`` overrides it for Proposal A's grammar)."""
        props = props or self.properties
        return {'stack': {
            'name': props[self.NAME],
            'lease_seconds': props[self.LEASE_SECONDS],
            'group': props[self.GROUP],
            'relationships': props[self.RELATIONSHIPS] or []}}

    def validate(self):
        super().validate()
        try:
            model.parse(self.document())
        except model.StackError as exc:
            field = exc.field
            where = field[len('stack.'):] if field.startswith('stack.') \
                else field
            raise exception.StackValidationFailed(
                path=[self.stack.t.RESOURCES, self.name,
                      self.stack.t.get_section_name('properties'), where],
                message=exc.message)

    def handle_create(self):
        try:
            body = client.call(self.client(), 'POST', '/stacks',
                               self.document())
        except client.APIError as exc:
            raise _error(exc)
        self.resource_id_set(body['stack']['id'])

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        if set(prop_diff) - {self.LEASE_SECONDS}:
            # a new tree or new policies: a new joint decision, made by a
            # replacement; the old one is released when it is deleted
            raise resource.UpdateReplace(self.name)
        if self.LEASE_SECONDS in prop_diff and self.resource_id:
            try:
                client.call(self.client(), 'POST',
                            f'/stacks/{self.resource_id}/action',
                            {'renew': {'lease_seconds':
                                       prop_diff[self.LEASE_SECONDS]}})
            except client.APIError as exc:
                raise _error(exc)

    def handle_delete(self):
        if not self.resource_id:
            return
        try:
            client.call(self.client(), 'DELETE',
                        f'/stacks/{self.resource_id}')
        except client.APIError as exc:
            if exc.status_code != 404:
                raise _error(exc)

    def _resolve_attribute(self, name):
        if not self.resource_id:
            return None
        if name == self.PLAN_ID:
            return self.resource_id
        try:
            stack = client.call(self.client(), 'GET',
                                f'/stacks/{self.resource_id}')['stack']
        except client.APIError as exc:
            raise _error(exc)
        return {self.HINTS: stack['hints'], self.SERVERS: stack['servers'],
                self.STATUS: stack['status']}[name]


class ScopedConfirm(resource.Resource):
    """Confirms a stack decision: the servers are built, the holds of
    those never booted are released. Give it ``depends_on`` the servers."""

    support_status = support.SupportStatus(version='27.0.0')
    default_client_name = CLIENT

    PROPERTIES = (PLAN,) = ('plan',)
    properties_schema = {
        PLAN: properties.Schema(
            properties.Schema.STRING,
            _('The decision: {get_resource: <the OS::ScopedPolicies::Stack '
              'resource>}.'),
            required=True),
    }

    def handle_create(self):
        plan = self.properties[self.PLAN]
        try:
            client.call(self.client(), 'POST', f'/stacks/{plan}/action',
                        {'confirm': None})
        except client.APIError as exc:
            raise _error(exc)
        self.resource_id_set(plan)

    def handle_delete(self):
        """Nothing to undo: deleting the decision releases everything."""


def resource_mapping():
    return {'OS::ScopedPolicies::Stack': ScopedStack,
            'OS::ScopedPolicies::Confirm': ScopedConfirm}
