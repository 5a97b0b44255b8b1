"""scoped_plan: boot a server of a stack decision on its decided host.

The hints ``scoped_plan=<decision id>`` and ``scoped_plan_member=<name>``
pin an initial boot to the host the joint decision chose (the scheduler's
copy of the RequestSpec gets ``requested_destination.host``, so nova asks
Placement for that host only) and give the member's hold back to Placement
just before nova claims the same resources there, and records the
instance booted for the member. The host filters still check every policy
of the stack (:mod:`..state`). A move (the instance runs on a host) is
never pinned, nor is an unshelve of a server built once already: the hints
stay in the RequestSpec for the server's lifetime, and the stack's policies
decide where it may go. A second instance for a server whose first one
still runs is refused; one for a server whose instance was deleted is
pinned and recorded in its place.

Between the hold's release and nova's claim (Placement's
``GET /allocation_candidates``, then the claim of the chosen host, in the
same ``select_destinations`` call) another boot could take the capacity;
the group lock of :mod:`..coordination` serialises our group boots there,
and ``doc/source/admin/holds.rst`` gives the measured window.
"""

import time

from oslo_log import log as logging

from nova import context as nova_context
from nova import exception
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.policy import shown
from nova_scoped_policies.scheduler import request_builder as builder
from nova_scoped_policies.scheduler.request_filters import base
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.scheduler import stores

LOG = logging.getLogger(__name__)
PLAN = builder.PLAN_HINT
MEMBER = builder.PLAN_MEMBER_HINT


def _failed(reason: str) -> exception.RequestFilterFailed:
    return exception.RequestFilterFailed(reason=f'{PLAN}: {reason}')


class ScopedPlanFilter(base.RequestFilter):
    """Pins the servers of a stack decision to their decided hosts."""

    option = sched_conf.ENABLE_SCOPED_PLAN

    @staticmethod
    def _runs(ctxt, instance_uuid) -> bool:
        """The instance runs on a host (see
        :meth:`.Sources.instance_host`)."""
        admin = (ctxt or nova_context.get_admin_context()).elevated()
        return state.states().sources.instance_host(
            admin, instance_uuid) is not None

    def _is_move(self, ctxt, spec) -> bool:
        """The instance runs on a host already: a move, a resize or an
        evacuation."""
        return self._runs(ctxt, spec.instance_uuid)

    def apply(self, ctxt, request_spec) -> bool:
        plan = builder.hint(request_spec, PLAN)
        member = builder.hint(request_spec, MEMBER)
        if not plan and not member:
            return True
        if not (plan and member):
            raise _failed(f'{PLAN} and {MEMBER} go together')
        if request_spec.num_instances > 1:
            raise _failed('one server per boot: each member of the decision '
                          'is booted on its own')
        if self._is_move(ctxt, request_spec):
            LOG.debug('%s: %s is moving; not pinned to its decided host',
                      self.name, request_spec.instance_uuid)
            return True
        store = state.states().sources.store
        if store is None:
            raise _failed('no policy store is configured ([scoped_policies] '
                          'store_driver)')
        try:
            found = store.stack_plan(plan)
        except stores.StoreUnavailable as exc:
            LOG.warning('%s: policy store unavailable: %s', self.name, exc)
            raise _failed('the policy store did not answer; try again')
        if found is None or found.project_id != request_spec.project_id \
                or member not in found.servers:
            raise _failed(f'decision {shown(plan)} has no server '
                          f'{shown(member)}')
        found = found.servers[member]
        if found.state == stack_db.RELEASED:
            raise _failed(f'the hold of {shown(member)} was released (lease '
                          'expired or stack confirmed); decide again')
        mine = request_spec.instance_uuid
        if found.state == stack_db.BOOTED and found.instance_uuid:
            if found.instance_uuid == mine:
                # built once already (an unshelve): placed by the stack's
                # policies like any move, not pinned
                return True
            # the first instance may still be scheduled or building (a
            # retry, a double submit): only a deleted or failed one is
            # replaced
            admin = (ctxt or nova_context.get_admin_context()).elevated()
            if state.states().sources.instance_alive(admin,
                                                     found.instance_uuid):
                raise _failed(f'server {shown(member)} of decision '
                              f'{shown(plan)} exists already as another '
                              'instance')
        base.destination(request_spec).host = found.host
        started = time.monotonic()
        try:
            store.boot_member(plan, member, mine)
        except stores.StoreUnavailable as exc:
            LOG.warning('%s: hold of %s not given back: %s', self.name,
                        member, exc)
            raise _failed('the held capacity could not be given back; '
                          'try again')
        LOG.info('%(name)s: %(member)s of %(plan)s pinned to its decided '
                 'host, its hold given back in %(ms).0f ms',
                 {'name': self.name, 'member': member, 'plan': plan,
                  'ms': (time.monotonic() - started) * 1000})
        return True
