"""Rules of ``/os-policy-scopes``: scopes are the cloud's, made by
administrators; every project reads them (tenants name domains in their
policies), and nova-scheduler reads them with real identifiers."""

from nova_scoped_policies.api.policies import base

PREFIX = 'scoped_policies:scopes:%s'
LIST = PREFIX % 'list'
SHOW = PREFIX % 'show'
CREATE = PREFIX % 'create'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'
ADD_AGGREGATE = PREFIX % 'add_aggregate'
REMOVE_AGGREGATE = PREFIX % 'remove_aggregate'
REAL_IDS = 'scoped_policies:real_ids'
"""See real aggregate uuids and host names in every response."""

_PATH = '/os-policy-scopes'
_READ = base.PROJECT_READER_OR_SERVICE_OR_ADMIN
_ACTION = _PATH + '/{scope}/action'
rules = [
    base.rule(LIST, _READ, base.OLD_ANY, 'List policy scopes.',
              [{'method': 'GET', 'path': _PATH}]),
    base.rule(SHOW, _READ, base.OLD_ANY, 'Show a policy scope.',
              [{'method': 'GET', 'path': _PATH + '/{scope}'}]),
    base.rule(CREATE, base.ADMIN, base.OLD_ADMIN, 'Create a policy scope.',
              [{'method': 'POST', 'path': _PATH}]),
    base.rule(UPDATE, base.ADMIN, base.OLD_ADMIN, 'Rename a scope or '
              'change its identifier settings.',
              [{'method': 'PUT', 'path': _PATH + '/{scope}'}]),
    base.rule(DELETE, base.ADMIN, base.OLD_ADMIN, 'Delete a policy scope '
              'no group uses.',
              [{'method': 'DELETE', 'path': _PATH + '/{scope}'}]),
    base.rule(ADD_AGGREGATE, base.ADMIN, base.OLD_ADMIN, 'Make a host '
              'aggregate a domain of the scope.',
              [{'method': 'POST', 'path': _ACTION + ' (add_aggregate)'}]),
    base.rule(REMOVE_AGGREGATE, base.ADMIN, base.OLD_ADMIN, 'Remove a '
              'domain from the scope.',
              [{'method': 'POST', 'path': _ACTION + ' (remove_aggregate)'}]),
    base.rule(REAL_IDS, base.SERVICE_OR_ADMIN, base.OLD_ADMIN, 'See real '
              'aggregate uuids and host names instead of tenant '
              'identifiers and surrogates (nova-scheduler\'s http store '
              'driver needs them); pass as_tenant_id to see a tenant\'s '
              'view.',
              [{'method': 'GET', 'path': _PATH},
               {'method': 'GET', 'path': '/os-server-groups/{uuid}/audit'}]),
]


def list_rules():
    return rules
