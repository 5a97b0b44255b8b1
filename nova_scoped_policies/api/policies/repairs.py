"""Rules of ``/repairs``: a tenant's member plans the repair of its
project's group or stack (the plan reads the cloud as the project sees
it); carrying a plan out live-migrates servers, an administrator's; the
project's reader follows its repair tasks."""

from nova_scoped_policies.api.policies import base

PREFIX = 'scoped_policies:repairs:%s'
PLAN = PREFIX % 'plan'
PLAN_ALL = PREFIX % 'plan:all'
APPLY = PREFIX % 'apply'
OLD_TASKS = PREFIX % 'tasks'
"""The first release's one rule of ``/repairs/tasks``: list, show and
cancel (administrators)."""
TASKS_LIST = PREFIX % 'tasks:list'
TASKS_SHOW = PREFIX % 'tasks:show'
TASKS_CANCEL = PREFIX % 'tasks:cancel'

_TASKS = '/repairs/tasks'
rules = [
    base.rule(PLAN, base.PROJECT_MEMBER_OR_ADMIN, base.OLD_ANY, 'Plan the '
              'repair of a server group or stack of the caller\'s (the '
              'fewest moves that end every hard violation).',
              [{'method': 'POST', 'path': '/repairs'}]),
    base.rule(PLAN_ALL, base.ADMIN, base.OLD_ADMIN, 'Plan the repair of '
              'every server group and stack.',
              [{'method': 'POST', 'path': '/repairs'}]),
    base.rule(APPLY, base.ADMIN, base.OLD_ADMIN, 'Carry a repair plan out '
              'through Nova (live migrations, each checked by '
              'nova-scheduler).',
              [{'method': 'POST', 'path': '/repairs/apply'}]),
    base.rule(TASKS_LIST, base.PROJECT_READER_OR_ADMIN, base.OLD_ADMIN,
              'List the repair tasks of the caller\'s project (every '
              'project\'s for administrators; microversion 1.4).',
              [{'method': 'GET', 'path': _TASKS}], renamed_from=OLD_TASKS),
    base.rule(TASKS_SHOW, base.PROJECT_READER_OR_ADMIN, base.OLD_ADMIN,
              'Show a repair task\'s progress (microversion 1.4).',
              [{'method': 'GET', 'path': _TASKS + '/{id}'}],
              renamed_from=OLD_TASKS),
    base.rule(TASKS_CANCEL, base.ADMIN, base.OLD_ADMIN, 'Cancel a repair '
              'task: it stops after the moves running now (microversion '
              '1.4).', [{'method': 'DELETE', 'path': _TASKS + '/{id}'}],
              renamed_from=OLD_TASKS),
]


def list_rules():
    return rules
