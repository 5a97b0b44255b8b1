"""oslo.policy enforcement for the policy API."""

from oslo_config import cfg
from oslo_policy import policy as oslo_policy
import webob.exc

from nova_scoped_policies.api import policies


def enforcer(conf: cfg.ConfigOpts) -> oslo_policy.Enforcer:
    """A new enforcer with our rules registered as defaults.

    Operators override rules in the file named by ``[oslo_policy]
    policy_file``; new defaults are enforced (``[oslo_policy]
    enforce_new_defaults``, True unless the configuration sets it), and
    every rule's ``scope_types`` always.

    :param conf: the service configuration.
    """
    enf = oslo_policy.Enforcer(conf)
    enf.register_defaults(policies.list_rules())
    # new defaults unless the configuration says otherwise, whatever
    # another library of the process made oslo.policy's own default
    # (Placement's test fixture sets it False for every process's options)
    conf.set_default('enforce_new_defaults', True, group='oslo_policy')
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


def authorize_on(context, action: str, show: str, project_id: str,
                 missing: webob.exc.HTTPNotFound) -> None:
    """Check ``action`` on a resource of project ``project_id``.

    A caller of another project who may not see it (``show``) gets
    ``missing``, the 404 of a resource that does not exist: other
    projects' resources are not disclosed. Any other refusal is a 403
    naming the rule (a reader's write, a token of the project without a
    role).

    :raises webob.exc.HTTPNotFound: ``missing``.
    :raises webob.exc.HTTPForbidden: ``action`` is refused.
    """
    target = {'project_id': project_id}
    if project_id != context.project_id and not context.can(
            show, target, fatal=False):
        raise missing
    context.can(action, target)
