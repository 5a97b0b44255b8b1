"""The building blocks the other rules refer to."""

from oslo_policy import policy

ADMIN = 'rule:admin_api'
ADMIN_OR_OWNER = 'rule:admin_or_owner'
ANY = '@'

rules = [
    policy.RuleDefault(
        'admin_api', 'role:admin',
        description='Cloud administrators: see real domain identifiers, '
        'manage scopes, act on any project\'s groups.'),
    policy.RuleDefault(
        'admin_or_owner', 'role:admin or project_id:%(project_id)s',
        description='An administrator, or a member of the project that owns '
        'the resource.'),
]


def list_rules():
    return rules
