"""Rules of ``/os-server-groups``, as Nova 34's server-group rules: the
project's reader reads, its member writes; every project's groups are an
administrator's, and nova-scheduler's (its ``http`` store driver reads
every group)."""

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
_READ = base.PROJECT_READER_OR_ADMIN
_WRITE = base.PROJECT_MEMBER_OR_ADMIN
_OWNER = base.OLD_OWNER
rules = [
    base.rule(LIST, base.PROJECT_READER_OR_SERVICE_OR_ADMIN, base.OLD_ANY,
              'List the scoped groups of the caller\'s project.',
              [{'method': 'GET', 'path': _PATH}]),
    base.rule(LIST_ALL, base.SERVICE_OR_ADMIN, base.OLD_ADMIN,
              'List the scoped groups of every project (all_projects=true, '
              'project_id=...), as nova-scheduler\'s http store driver '
              'does.', [{'method': 'GET', 'path': _PATH}]),
    base.rule(SHOW, base.PROJECT_READER_OR_SERVICE_OR_ADMIN, _OWNER,
              'Show a group\'s scoped policies (nova-scheduler\'s http '
              'store driver reads any project\'s).',
              [{'method': 'GET', 'path': _ONE}]),
    base.rule(CREATE, _WRITE, _OWNER, 'Give a server group scoped '
              'policies.', [{'method': 'POST', 'path': _PATH}]),
    base.rule(UPDATE, _WRITE, _OWNER, 'Change a group\'s name or policies.',
              [{'method': 'POST', 'path': _ONE}]),
    base.rule(DELETE, _WRITE, _OWNER, 'Drop a group\'s scoped policies.',
              [{'method': 'DELETE', 'path': _ONE}]),
    base.rule(ADD_INSTANCE, _WRITE, _OWNER, 'Add an instance to a group '
              'without enforcing its policies.',
              [{'method': 'POST', 'path': _ONE + '/action (add_instance)'}]),
    base.rule(REMOVE_INSTANCE, _WRITE, _OWNER, 'Remove an instance from a '
              'group.', [{'method': 'POST',
                          'path': _ONE + '/action (remove_instance)'}]),
    base.rule(AUDIT, _READ, _OWNER, 'Audit where a group\'s members run.',
              [{'method': 'GET', 'path': _ONE + '/audit'}]),
]


def list_rules():
    return rules
