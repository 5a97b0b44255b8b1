"""The personas the other rules refer to, as Nova 34
(``nova/policies/base.py``) and Placement 16 (``placement/policies/
base.py``) define them: ``admin``, the project's ``manager``, ``member``
and ``reader``, and ``service`` (service-to-service calls: the
scheduler's ``http`` store driver).

Keystone's roles imply one another (``admin`` implies ``manager``, which
implies ``member``, which implies ``reader``): a rule that lets the
project reader in lets every stronger role of the project in.

The rules of the first release, ``admin_or_owner`` (any role of the
project) and ``admin_api``'s old meaning, stay as :class:`DeprecatedRule`
s of the personas that replace them, as Nova's did: a policy file that
overrides them keeps working for a release, and ``[oslo_policy]
enforce_new_defaults = False`` ORs the old defaults back in.
"""

import typing

from oslo_policy import policy

ADMIN = 'rule:admin_api'
PROJECT_MANAGER_OR_ADMIN = 'rule:project_manager_or_admin'
PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
SERVICE_OR_ADMIN = 'rule:service_or_admin'
PROJECT_READER_OR_SERVICE_OR_ADMIN = 'rule:project_reader_or_service_or_admin'
PROJECT_MEMBER_OR_SERVICE_OR_ADMIN = 'rule:project_member_or_service_or_admin'
SCOPE_TYPES = ['project']
"""Every rule's ``scope_types``: Nova and Placement take project-scoped
tokens only; a system- or domain-scoped token is refused (403)."""

DEPRECATED_SINCE = '2026.2'
DEPRECATED_REASON = """
The policy API's rules gain Nova's and Placement's personas (admin, project
manager, member and reader, service) with scope_types. The old defaults
let any role of a project, the reader's included, do whatever the project
may do.
"""
LEGACY_OWNER = 'role:admin or project_id:%(project_id)s'
"""The first release's ``admin_or_owner``: any role of the project."""

DEPRECATED_OWNER = policy.DeprecatedRule(
    name='admin_or_owner', check_str=LEGACY_OWNER,
    deprecated_reason=DEPRECATED_REASON, deprecated_since=DEPRECATED_SINCE)
DEPRECATED_ADMIN = policy.DeprecatedRule(
    name='admin_api', check_str='role:admin',
    deprecated_reason=DEPRECATED_REASON, deprecated_since=DEPRECATED_SINCE)


OLD_ANY = '@'
OLD_OWNER = 'rule:admin_or_owner'
OLD_ADMIN = ADMIN
"""The first release's defaults: anyone with a token, any role of the
owning project, an administrator."""


def rule(name: str, check_str: str, old: str, description: str,
         operations: list, renamed_from: typing.Optional[str] = None
         ) -> policy.DocumentedRuleDefault:
    """A rule of the API, project-scoped, whose first release's default
    ``old`` (and name) stays as its :class:`DeprecatedRule` when it
    changed.

    :param old: the first release's default (:data:`OLD_ANY`,
        :data:`OLD_OWNER` or :data:`OLD_ADMIN`).
    :param renamed_from: the rule's name in the first release, when it
        had another: an override of that name is still honoured.
    """
    deprecated = None
    if old != check_str or renamed_from:
        deprecated = policy.DeprecatedRule(
            name=renamed_from or name, check_str=old,
            deprecated_reason=DEPRECATED_REASON,
            deprecated_since=DEPRECATED_SINCE)
    return policy.DocumentedRuleDefault(
        name, check_str, description, operations,
        scope_types=SCOPE_TYPES, deprecated_rule=deprecated)


rules = [
    policy.RuleDefault(
        'admin_api', 'role:admin',
        description='Cloud administrators: see real domain identifiers, '
        'manage scopes, act on any project\'s groups and stacks.',
        scope_types=SCOPE_TYPES),
    policy.RuleDefault(
        'admin_or_owner', LEGACY_OWNER,
        description='An administrator, or any role of the project that '
        'owns the resource (the first release\'s default of most rules; '
        'no default refers to it any more).',
        scope_types=SCOPE_TYPES, deprecated_for_removal=True,
        deprecated_reason=DEPRECATED_REASON,
        deprecated_since=DEPRECATED_SINCE),
    policy.RuleDefault(
        'project_manager_api', 'role:manager and project_id:%(project_id)s',
        description='The manager of the project that owns the resource. No '
        'default uses it alone: Nova 34 gives the manager nothing on '
        'server groups beyond the member\'s, which the manager role '
        'implies.', scope_types=SCOPE_TYPES),
    policy.RuleDefault(
        'project_member_api', 'role:member and project_id:%(project_id)s',
        description='A member of the project that owns the resource.',
        scope_types=SCOPE_TYPES, deprecated_rule=DEPRECATED_OWNER),
    policy.RuleDefault(
        'project_reader_api', 'role:reader and project_id:%(project_id)s',
        description='A reader of the project that owns the resource.',
        scope_types=SCOPE_TYPES, deprecated_rule=DEPRECATED_OWNER),
    policy.RuleDefault(
        'service_api', 'role:service',
        description='Service-to-service calls: nova-scheduler\'s ``http`` '
        'store driver ([policy_api] credentials).',
        scope_types=SCOPE_TYPES, deprecated_rule=DEPRECATED_ADMIN),
    policy.RuleDefault(
        'project_manager_or_admin',
        'rule:project_manager_api or rule:admin_api',
        description='The project\'s manager, or an administrator.',
        scope_types=SCOPE_TYPES),
    policy.RuleDefault(
        'project_member_or_admin',
        'rule:project_member_api or rule:admin_api',
        description='The project\'s member, or an administrator: writes.',
        scope_types=SCOPE_TYPES),
    policy.RuleDefault(
        'project_reader_or_admin',
        'rule:project_reader_api or rule:admin_api',
        description='The project\'s reader, or an administrator: reads.',
        scope_types=SCOPE_TYPES),
    policy.RuleDefault(
        'service_or_admin', 'rule:service_api or rule:admin_api',
        description='A service (nova-scheduler), or an administrator.',
        scope_types=SCOPE_TYPES),
    policy.RuleDefault(
        'project_reader_or_service_or_admin',
        'rule:project_reader_api or rule:service_api or rule:admin_api',
        description='Reads nova-scheduler makes too (Placement\'s '
        '``admin_or_project_reader_or_service_api``).',
        scope_types=SCOPE_TYPES),
    policy.RuleDefault(
        'project_member_or_service_or_admin',
        'rule:project_member_api or rule:service_api or rule:admin_api',
        description='Writes nova-scheduler makes too (a stack member\'s '
        'hold given back as it boots).', scope_types=SCOPE_TYPES),
]


def list_rules():
    return rules
