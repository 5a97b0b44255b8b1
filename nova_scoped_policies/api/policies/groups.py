"""Rules of ``/os-server-groups``."""

from oslo_policy import policy

from nova_scoped_policies.api.policies import base

PREFIX = 'scoped_policies:server_groups:%s'
LIST = PREFIX % 'list'
LIST_ALL = PREFIX % 'list:all_projects'
SHOW = PREFIX % 'show'
CREATE = PREFIX % 'create'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'
ADD_INSTANCE = PREFIX % 'add_instance'
REMOVE_INSTANCE = PREFIX % 'remove_instance'
AUDIT = PREFIX % 'audit'

_PATH = '/os-server-groups'
_ONE = _PATH + '/{uuid}'
rules = [
    policy.DocumentedRuleDefault(
        LIST, base.ANY, 'List the scoped groups of the caller\'s project.',
        [{'method': 'GET', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        LIST_ALL, base.ADMIN, 'List the scoped groups of every project '
        '(all_projects=true, project_id=...).',
        [{'method': 'GET', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        SHOW, base.ADMIN_OR_OWNER, 'Show a group\'s scoped policies.',
        [{'method': 'GET', 'path': _ONE}]),
    policy.DocumentedRuleDefault(
        CREATE, base.ADMIN_OR_OWNER, 'Give a server group scoped policies.',
        [{'method': 'POST', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        UPDATE, base.ADMIN_OR_OWNER, 'Change a group\'s name or policies.',
        [{'method': 'POST', 'path': _ONE}]),
    policy.DocumentedRuleDefault(
        DELETE, base.ADMIN_OR_OWNER, 'Drop a group\'s scoped policies.',
        [{'method': 'DELETE', 'path': _ONE}]),
    policy.DocumentedRuleDefault(
        ADD_INSTANCE, base.ADMIN_OR_OWNER, 'Add an instance to a group '
        'without enforcing its policies.',
        [{'method': 'POST', 'path': _ONE + '/action (add_instance)'}]),
    policy.DocumentedRuleDefault(
        REMOVE_INSTANCE, base.ADMIN_OR_OWNER, 'Remove an instance from a '
        'group.', [{'method': 'POST', 'path': _ONE +
                    '/action (remove_instance)'}]),
    policy.DocumentedRuleDefault(
        AUDIT, base.ADMIN_OR_OWNER, 'Audit where a group\'s members run.',
        [{'method': 'GET', 'path': _ONE + '/audit'}]),
]


def list_rules():
    return rules
