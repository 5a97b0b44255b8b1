"""Policy rules in code (``oslopolicy-sample-generator`` namespace
``nova_scoped_policies.api``), and :class:`Defaults`: the same rules
where the API is not (the dashboard, the CLI)."""

import itertools
import typing

from oslo_config import cfg
from oslo_policy import policy

from nova_scoped_policies.api.policies import base
from nova_scoped_policies.api.policies import export
from nova_scoped_policies.api.policies import groups
from nova_scoped_policies.api.policies import repairs
from nova_scoped_policies.api.policies import scopes
from nova_scoped_policies.api.policies import stacks


def list_rules():
    """Every rule the API enforces, with its default."""
    return list(itertools.chain(base.list_rules(), scopes.list_rules(),
                                groups.list_rules(), stacks.list_rules(),
                                repairs.list_rules(),
                                export.list_rules()))


class Defaults:
    """The API's rules, evaluated by a client so that it offers an action
    only to those who may take it (the API decides: 403 for the others).

    :param policy_file: the operator's policy file of the API, when the
        client has a copy of it (Horizon's ``POLICY_FILES``); the rules'
        defaults otherwise.
    """

    def __init__(self, policy_file: typing.Optional[str] = None) -> None:
        conf = cfg.ConfigOpts()
        conf([], default_config_files=[], default_config_dirs=[])
        rules = list_rules()
        if policy_file:
            self.enforcer = policy.Enforcer(conf, policy_file=policy_file)
            self.enforcer.register_defaults(rules)
            self.enforcer.load_rules()
        else:
            self.enforcer = policy.Enforcer(conf, use_conf=False)
            self.enforcer.register_defaults(rules)
            self.enforcer.set_rules({r.name: r.check for r in rules},
                                    use_conf=False)
        self.enforcer.suppress_deprecation_warnings = True

    def allowed(self, rule: str, project_id: typing.Optional[str],
                roles: typing.Iterable[str],
                target: typing.Optional[dict] = None) -> bool:
        """Whether a project-scoped token of ``project_id`` with
        ``roles`` passes ``rule`` on ``target`` (default: the token's
        project's)."""
        creds = {'project_id': project_id, 'roles': list(roles)}
        return bool(self.enforcer.enforce(
            rule, target or {'project_id': project_id}, creds))
