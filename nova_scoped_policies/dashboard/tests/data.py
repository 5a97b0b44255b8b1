"""Records the mocked API wrapper answers (tenant identifiers as the
policy API gives them)."""

from nova_scoped_policies.dashboard.api import scoped_policies as api

GROUP = '5bbcc3c4-1da2-4437-a48a-66f15b1b13f9'
RACK_1 = '2c0d6a53-5f1e-4f0e-9d86-cfb3a0f0d1b7'
RACK_2 = '4d151740-23ab-54df-bd3e-db05d46b3602'
RACK_3 = '6766e678-2d4e-58cb-81a4-eb526a64c7b4'
I1 = '990f1e6a-ced2-4d75-9fac-a8431a48d21e'
I2 = '9c975e5f-d7fe-427f-928c-c830ff644a0c'
PROJECT = '1'
"""The project of Horizon's test user."""


def group(**kw):
    body = {'id': GROUP, 'name': 'db', 'project_id': PROJECT,
            'policy': {'name': 'anti-affinity:rack',
                       'rules': {'max_server_per_rack': 1}},
            'members': [I1, I2], 'excluded_members': []}
    body.update(kw)
    return api.Group.of(body)


def audit(violated=True):
    where = RACK_1 if violated else RACK_2
    return api.Audit.of({
        'server_group_id': GROUP,
        'members': [{'instance_id': I1, 'placements': {'rack': RACK_1}},
                    {'instance_id': I2, 'placements': {'rack': where}}],
        'violations': [f'anti-affinity:rack: {RACK_1} holds 2 of max 1 '
                       f'({I1}, {I2})'] if violated else []})


def scope():
    return api.Scope.of({'uuid': 'u', 'name': 'rack',
                         'allow_identifiers': True,
                         'obfuscate_identifiers': True,
                         'aggregates': [RACK_1, RACK_2, RACK_3]})


def plan(target=None):
    return api.Plan.of(target or api.Target('server_group', GROUP), {
        'status': 'repaired', 'reason': '', 'fingerprint': 'f1',
        'violations': audit().violations,
        'moves': [{'server': I2, 'from': 'h-a', 'to': 'h-b'}]})


TASK = '3f1f6c6e-8d2a-4b7e-9a51-2b7c0c9e4d10'
MOVE_1 = {'server': I1, 'from': 'h-a', 'to': 'h-c'}
MOVE_2 = {'server': I2, 'from': 'h-a', 'to': 'h-b'}


def task(**kw):
    """A repair task of two moves, as ``GET /repairs/tasks/{id}``
    answers it (running, nothing done yet unless told)."""
    body = {'id': TASK, 'target': f'server_group {GROUP}',
            'status': 'running', 'moves': [MOVE_1, MOVE_2], 'done': [],
            'current': [MOVE_1], 'failed': None, 'cancel_requested': False,
            'created_at': '2026-11-25T23:00:00Z', 'finished_at': None}
    body.update(kw)
    return api.Task.of(body)
