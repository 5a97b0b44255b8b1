"""The request context: who calls, and what they may do."""

from oslo_context import context

from nova_scoped_policies.api import policy


class RequestContext(context.RequestContext):
    """oslo.context's context plus :meth:`can`.

    :param enforcer: the service's oslo.policy enforcer.
    """

    def __init__(self, *args, enforcer=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.enforcer = enforcer

    def can(self, action: str, target: dict = None,
            fatal: bool = True) -> bool:
        """Whether the caller may perform ``action`` on ``target``.

        :param action: a rule name from :mod:`.policies`.
        :param target: attributes of the resource (``project_id``).
        :param fatal: raise 403 instead of returning False.
        """
        return policy.authorize(self, action, target or {
            'project_id': self.project_id}, fatal)
