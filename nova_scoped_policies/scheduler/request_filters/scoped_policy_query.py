"""scoped_policy_query: hard scoped policies as ``member_of`` constraints."""

from oslo_log import log as logging

from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.engine import placement_query
from nova_scoped_policies.scheduler.request_filters import base
from nova_scoped_policies.scheduler import state

LOG = logging.getLogger(__name__)


class ScopedPolicyQueryFilter(base.RequestFilter):
    """Shrinks the Placement candidates to the domains that can pass.

    Reads the same per-request state as the host filters (one member lookup
    per request in all), so the host filters then find it ready.
    """

    option = sched_conf.ENABLE_SCOPED_POLICY_QUERY

    def apply(self, ctxt, request_spec) -> bool:
        evaluation = state.states().evaluation(request_spec)
        if evaluation is None:
            return False
        found = placement_query.constraints(evaluation)
        if not found:
            return True
        dest = None
        for domains in found.required:
            if base.too_many(self.name, 'required domains', domains):
                continue
            dest = dest or base.destination(request_spec)
            dest.require_aggregates(sorted(domains))
        if found.forbidden and not base.too_many(
                self.name, 'forbidden domains', found.forbidden):
            base.forbid_aggregates(request_spec, found.forbidden)
            dest = base.destination(request_spec)
        if dest is not None:
            LOG.debug('%(name)s added to the Placement query: %(why)s',
                      {'name': self.name, 'why': '; '.join(found.why)})
        return True
