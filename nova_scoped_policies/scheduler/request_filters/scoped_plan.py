"""scoped_plan: boot a server of a stack decision on its decided host.

The hints ``scoped_plan=<decision id>`` and ``scoped_plan_member=<name>``
pin an initial boot to the host the joint decision chose (the scheduler's
copy of the RequestSpec gets ``requested_destination.host``, so nova asks
Placement for that host only) and give the member's hold back to Placement
just before nova claims the same resources there. The host filters still
check every policy. A move (the instance has allocations already) is never
pinned: the hints stay in the RequestSpec for the server's lifetime.

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
from nova import objects
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.policy import shown
from nova_scoped_policies.scheduler.request_filters import base
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.scheduler import stores

LOG = logging.getLogger(__name__)
PLAN = 'scoped_plan'
MEMBER = 'scoped_plan_member'


def _hint(spec, name):
    hints = spec.scheduler_hints if (
        'scheduler_hints' in spec and spec.scheduler_hints) else {}
    value = hints.get(name)
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value


def _failed(reason: str) -> exception.RequestFilterFailed:
    return exception.RequestFilterFailed(reason=f'{PLAN}: {reason}')


class ScopedPlanFilter(base.RequestFilter):
    """Pins the servers of a stack decision to their decided hosts."""

    option = sched_conf.ENABLE_SCOPED_PLAN

    @staticmethod
    def _is_move(ctxt, spec) -> bool:
        """The instance runs on a host already: a move, a resize or an
        evacuation. An initial boot is scheduled before the instance
        exists in a cell (its mapping has no cell yet); its reschedules
        find it with no host (nova clears it after a failed build)."""
        admin = (ctxt or nova_context.get_admin_context()).elevated()
        try:
            mapping = objects.InstanceMapping.get_by_instance_uuid(
                admin, spec.instance_uuid)
        except exception.InstanceMappingNotFound:
            return False
        if mapping.cell_mapping is None:
            return False
        with nova_context.target_cell(admin, mapping.cell_mapping) as cctxt:
            try:
                instance = objects.Instance.get_by_uuid(
                    cctxt, spec.instance_uuid, expected_attrs=[])
            except exception.InstanceNotFound:
                return False
        return instance.host is not None

    def apply(self, ctxt, request_spec) -> bool:
        plan, member = _hint(request_spec, PLAN), _hint(request_spec, MEMBER)
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
            found = store.plan_member(plan, member)
        except stores.StoreUnavailable as exc:
            LOG.warning('%s: policy store unavailable: %s', self.name, exc)
            raise _failed('the policy store did not answer; try again')
        if found is None or found.project_id != request_spec.project_id:
            raise _failed(f'decision {shown(plan)} has no server '
                          f'{shown(member)}')
        if found.state == stack_db.RELEASED:
            raise _failed(f'the hold of {shown(member)} was released (lease '
                          'expired or stack confirmed); decide again')
        base.destination(request_spec).host = found.host
        if found.state == stack_db.HELD:
            started = time.monotonic()
            try:
                store.boot_member(plan, member)
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
