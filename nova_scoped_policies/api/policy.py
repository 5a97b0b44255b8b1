"""oslo.policy enforcement for the policy API."""

from oslo_config import cfg
from oslo_policy import policy as oslo_policy
import webob.exc

from nova_scoped_policies.api import policies


def enforcer(conf: cfg.ConfigOpts) -> oslo_policy.Enforcer:
    """A new enforcer with our rules registered as defaults.

    Operators override rules in the file named by ``[oslo_policy]
    policy_file``.

    :param conf: the service configuration.
    """
    enf = oslo_policy.Enforcer(conf)
    enf.register_defaults(policies.list_rules())
    return enf


def authorize(context, action: str, target: dict, fatal: bool = True
              ) -> bool:
    """Check ``action`` for ``context`` on ``target``.

    :raises webob.exc.HTTPForbidden: when denied and ``fatal``.
    """
    creds = context.to_policy_values()
    try:
        return context.enforcer.authorize(
            action, target, creds, do_raise=fatal,
            exc=webob.exc.HTTPForbidden,
            explanation=f'Policy does not allow {action} to be performed.')
    except oslo_policy.InvalidScope:
        if fatal:
            raise webob.exc.HTTPForbidden(
                explanation=f'Policy does not allow {action} to be '
                'performed.')
        return False
