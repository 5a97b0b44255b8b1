"""Rules of ``/stacks`` (microversion 1.1): the project's reader reads
its decisions, its member decides, renews, confirms and deletes them
(a decision holds capacity); nova-scheduler reads any project's decision
and gives a member's hold back as it boots it."""

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
_READ = base.PROJECT_READER_OR_ADMIN
_WRITE = base.PROJECT_MEMBER_OR_ADMIN
_OWNER = base.OLD_OWNER
rules = [
    base.rule(LIST, _READ, base.OLD_ANY, 'List the stack decisions of the '
              'caller\'s project.', [{'method': 'GET', 'path': _PATH}]),
    base.rule(LIST_ALL, base.ADMIN, base.OLD_ADMIN, 'List the stack '
              'decisions of every project (all_projects=true).',
              [{'method': 'GET', 'path': _PATH}]),
    base.rule(SHOW, base.PROJECT_READER_OR_SERVICE_OR_ADMIN, _OWNER,
              'Show a stack decision (nova-scheduler\'s http store driver '
              'reads any project\'s as it boots a member).',
              [{'method': 'GET', 'path': _ONE}]),
    base.rule(CREATE, _WRITE, base.OLD_ANY, 'Decide a stack jointly and '
              'hold its capacity in Placement, within the project\'s Nova '
              'quota.', [{'method': 'POST', 'path': _PATH}]),
    base.rule(RENEW, _WRITE, _OWNER, 'Extend a decision\'s lease (within '
              'the project\'s Nova quota).',
              [{'method': 'POST', 'path': _ONE + '/action (renew)'}]),
    base.rule(CONFIRM, _WRITE, _OWNER, 'Release the holds of servers never '
              'booted.', [{'method': 'POST',
                           'path': _ONE + '/action (confirm)'}]),
    base.rule(BOOT_MEMBER, base.PROJECT_MEMBER_OR_SERVICE_OR_ADMIN,
              base.OLD_ADMIN, 'Give a member\'s hold back as it boots on '
              'its decided host (nova-scheduler\'s http store driver, with '
              'the service role).',
              [{'method': 'POST', 'path': _ONE + '/action (boot_member)'}]),
    base.rule(AUDIT, _READ, _OWNER, 'Audit a stack: each of its policies '
              'and relationships against where its servers are '
              '(microversion 1.2).',
              [{'method': 'GET', 'path': _ONE + '/audit'}]),
    base.rule(DELETE, _WRITE, _OWNER, 'Release every hold and forget the '
              'decision.', [{'method': 'DELETE', 'path': _ONE}]),
]


def list_rules():
    return rules
