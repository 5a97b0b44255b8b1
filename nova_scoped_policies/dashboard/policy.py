"""What the panels offer a user, and what they say when the policy API
refuses.

An action is shown only to those whose roles pass its rule
(:mod:`nova_scoped_policies.api.policies`: a project's reader reads, its
member writes, administrators act on every project), as Horizon's
``policy_rules`` do for the services it ships rules for. The rules are
the API's own, in code; an operator whose policy API overrides them puts
a copy of that policy file where Horizon reads the services' files
(``POLICY_FILES_PATH``) and names it in ``POLICY_FILES`` under
``scoped-policies``. The policy API still decides: a refusal (403) shows
the API's reason, never "Unable to ...".
"""

import functools
import os
import sys
import typing

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from horizon import exceptions

from nova_scoped_policies.api import policies
from nova_scoped_policies.dashboard.api import scoped_policies as api

FORBIDDEN = 403


@functools.lru_cache(maxsize=None)
def _rules(path: typing.Optional[str]) -> policies.Defaults:
    return policies.Defaults(path)


def policy_file() -> typing.Optional[str]:
    """The operator's copy of the policy API's policy file, if named."""
    name = (getattr(settings, 'POLICY_FILES', None) or {}).get(
        api.SERVICE_TYPE)
    if not name:
        return None
    return os.path.join(getattr(settings, 'POLICY_FILES_PATH', ''), name)


def allowed(request, rule: str, project_id: typing.Optional[str] = None
            ) -> bool:
    """Whether the request's user may take the action of ``rule`` on a
    resource of ``project_id`` (default: the user's project)."""
    user = request.user
    roles = [role['name'] for role in getattr(user, 'roles', ())]
    target = {'project_id': project_id} if project_id else None
    return _rules(policy_file()).allowed(rule, user.project_id, roles,
                                         target)


class Allowed:
    """A table action shown only to those its ``rule`` lets through, on
    the row's project (``datum.project_id``) or the user's."""

    rule: str = ''

    def allowed(self, request, datum=None):
        return allowed(request, self.rule,
                       getattr(datum, 'project_id', None) or None)


def reason(exc: BaseException) -> typing.Optional[str]:
    """The policy API's words when it refused (403), else None."""
    if isinstance(exc, api.APIError) and exc.status == FORBIDDEN:
        return exc.detail or _('The policy API refused the request.')
    return None


def handle(request, message: str, **kwargs):
    """Horizon's ``exceptions.handle`` of the exception being handled,
    saying the policy API's reason when it refused (403) instead of
    ``message`` ("Unable to ...")."""
    refused = reason(sys.exc_info()[1])
    if refused is not None:
        # the reason once: not followed by the exception's text again
        kwargs['details'] = ''
    return exceptions.handle(request, refused or message, **kwargs)


def call(function, request, *args):
    """``function(request, *args)``, a refusal of the policy API said in
    its own words (a Horizon batch action, such as a delete, would
    otherwise say "Unable to ...")."""
    try:
        return function(request, *args)
    except api.APIError as exc:
        if reason(exc) is None:
            raise
        handle(request, '', escalate=True)
