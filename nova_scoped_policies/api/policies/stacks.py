"""Rules of ``/stacks`` (microversion 1.1)."""

from oslo_policy import policy

from nova_scoped_policies.api.policies import base

PREFIX = 'scoped_policies:stacks:%s'
LIST = PREFIX % 'list'
LIST_ALL = PREFIX % 'list:all_projects'
SHOW = PREFIX % 'show'
CREATE = PREFIX % 'create'
RENEW = PREFIX % 'renew'
CONFIRM = PREFIX % 'confirm'
DELETE = PREFIX % 'delete'
BOOT_MEMBER = PREFIX % 'boot_member'
AUDIT = PREFIX % 'audit'

_PATH = '/stacks'
_ONE = _PATH + '/{id}'
rules = [
    policy.DocumentedRuleDefault(
        LIST, base.ANY, 'List the stack decisions of the caller\'s project.',
        [{'method': 'GET', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        LIST_ALL, base.ADMIN, 'List the stack decisions of every project '
        '(all_projects=true).', [{'method': 'GET', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        SHOW, base.ADMIN_OR_OWNER, 'Show a stack decision.',
        [{'method': 'GET', 'path': _ONE}]),
    policy.DocumentedRuleDefault(
        CREATE, base.ANY, 'Decide a stack jointly and hold its capacity '
        'in Placement.', [{'method': 'POST', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        RENEW, base.ADMIN_OR_OWNER, 'Extend a decision\'s lease.',
        [{'method': 'POST', 'path': _ONE + '/action (renew)'}]),
    policy.DocumentedRuleDefault(
        CONFIRM, base.ADMIN_OR_OWNER, 'Release the holds of servers never '
        'booted.', [{'method': 'POST', 'path': _ONE + '/action (confirm)'}]),
    policy.DocumentedRuleDefault(
        BOOT_MEMBER, base.ADMIN, 'Give a member\'s hold back as the '
        'scheduler boots it on its decided host (the scheduler\'s '
        'credentials).',
        [{'method': 'POST', 'path': _ONE + '/action (boot_member)'}]),
    policy.DocumentedRuleDefault(
        AUDIT, base.ADMIN_OR_OWNER, 'Audit a stack: each of its policies '
        'and relationships against where its servers are (microversion '
        '1.2).', [{'method': 'GET', 'path': _ONE + '/audit'}]),
    policy.DocumentedRuleDefault(
        DELETE, base.ADMIN_OR_OWNER, 'Release every hold and forget the '
        'decision.', [{'method': 'DELETE', 'path': _ONE}]),
]


def list_rules():
    return rules
