"""Rules of ``/os-policy-scopes``."""

from oslo_policy import policy

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
rules = [
    policy.DocumentedRuleDefault(
        LIST, base.ANY, 'List policy scopes.', [{'method': 'GET',
                                                 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        SHOW, base.ANY, 'Show a policy scope.',
        [{'method': 'GET', 'path': _PATH + '/{scope}'}]),
    policy.DocumentedRuleDefault(
        CREATE, base.ADMIN, 'Create a policy scope.',
        [{'method': 'POST', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        UPDATE, base.ADMIN, 'Rename a scope or change its identifier '
        'settings.', [{'method': 'PUT', 'path': _PATH + '/{scope}'}]),
    policy.DocumentedRuleDefault(
        DELETE, base.ADMIN, 'Delete a policy scope no group uses.',
        [{'method': 'DELETE', 'path': _PATH + '/{scope}'}]),
    policy.DocumentedRuleDefault(
        ADD_AGGREGATE, base.ADMIN, 'Make a host aggregate a domain of the '
        'scope.', [{'method': 'POST', 'path': _PATH + '/{scope}/action '
                    '(add_aggregate)'}]),
    policy.DocumentedRuleDefault(
        REMOVE_AGGREGATE, base.ADMIN, 'Remove a domain from the scope.',
        [{'method': 'POST', 'path': _PATH + '/{scope}/action '
          '(remove_aggregate)'}]),
    policy.DocumentedRuleDefault(
        REAL_IDS, base.ADMIN, 'See real aggregate uuids and host names '
        'instead of tenant identifiers and surrogates; pass as_tenant_id '
        'to see a tenant\'s view.',
        [{'method': 'GET', 'path': _PATH},
         {'method': 'GET', 'path': '/os-server-groups/{uuid}/audit'}]),
]


def list_rules():
    return rules
