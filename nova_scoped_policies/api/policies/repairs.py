"""Rules of ``/repairs``."""

from oslo_policy import policy

from nova_scoped_policies.api.policies import base

PREFIX = 'scoped_policies:repairs:%s'
PLAN = PREFIX % 'plan'
PLAN_ALL = PREFIX % 'plan:all'
APPLY = PREFIX % 'apply'
TASKS = PREFIX % 'tasks'

rules = [
    policy.DocumentedRuleDefault(
        PLAN, base.ANY, 'Plan the repair of a server group or stack of the '
        'caller\'s (the fewest moves that end every hard violation).',
        [{'method': 'POST', 'path': '/repairs'}]),
    policy.DocumentedRuleDefault(
        PLAN_ALL, base.ADMIN, 'Plan the repair of every server group and '
        'stack.', [{'method': 'POST', 'path': '/repairs'}]),
    policy.DocumentedRuleDefault(
        APPLY, base.ADMIN, 'Carry a repair plan out through Nova (live '
        'migrations, each checked by nova-scheduler).',
        [{'method': 'POST', 'path': '/repairs/apply'}]),
    policy.DocumentedRuleDefault(
        TASKS, base.ADMIN, 'List, show and cancel repair tasks (a plan '
        'carried out in the background, microversion 1.4).',
        [{'method': 'GET', 'path': '/repairs/tasks'},
         {'method': 'GET', 'path': '/repairs/tasks/{id}'},
         {'method': 'DELETE', 'path': '/repairs/tasks/{id}'}]),
]


def list_rules():
    return rules
