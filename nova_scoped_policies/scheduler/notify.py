"""The scheduler's versioned notification: a move that finds its server
group or its stack in violation.

A violation the scheduler could not prevent (a policy the tenant
tightened, an evacuation with no legal host left, a host that changed
racks) is found when a member of the group or stack is moved: nova-
scheduler then sends ``scoped_policy.violation``, the event and payload
the policy API sends when an audit finds one
(:mod:`nova_scoped_policies.notifications`), through nova's own versioned
notifier (nova.conf's ``[notifications]`` and
``[oslo_messaging_notifications]``; nothing when nova sends no versioned
notifications). A notification never fails or delays a move beyond the
send itself.
"""

import socket

from oslo_log import log as logging

from nova import rpc
from nova_scoped_policies.notifications import payloads

LOG = logging.getLogger(__name__)
EVENT = 'scoped_policy.violation'
PUBLISHER = 'nova-scoped-policies-scheduler'


def violation(context, kind: str, id: str, project_id: str,
              violations) -> None:
    """Send ``scoped_policy.violation`` for a group or a stack.

    :param context: the request's (admin) context.
    :param kind: ``server_group`` or ``stack``.
    :param id: its uuid.
    :param project_id: its project.
    :param violations: the audit's sentences (real identifiers).
    """
    if not violations or rpc.NOTIFIER is None:
        return
    try:
        rpc.get_versioned_notifier(
            f'{PUBLISHER}:{socket.gethostname()}').warn(
            context, EVENT, payloads.of_violations(
                kind, id, project_id, violations).primitive())
    except Exception as exc:  # never fails the move
        LOG.warning('Scoped policies: the violation of %s %s was not '
                    'notified: %s', kind, id, exc)
