"""forbidden_aggregates: ``trait:X=required`` aggregates vs the request."""

from oslo_log import log as logging

from nova import context as nova_context
from nova.scheduler import utils as nova_utils
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.scheduler.request_filters import base
from nova_scoped_policies.scheduler import state

LOG = logging.getLogger(__name__)


class ForbiddenAggregatesFilter(base.RequestFilter):
    """Adds ``member_of=!in:`` for every aggregate that requires a trait the
    request (flavor extra specs and image properties) does not require.

    This isolates hosts (licensed ones, often), so it never reads an
    older copy of the aggregates than nova's own ``isolate_aggregates``
    would: while an aggregate listener of this process keeps the
    scheduler's cached copy fresh (the nova seam's), the filter reads the
    copy, one notification's delivery behind at most, and costs no
    database call; otherwise (notifications off, no transport, the seam
    off, the listener not started or failed) it reads the aggregates'
    ``trait:`` metadata from the API database for every request, one
    query, as nova's does (:attr:`.aggregate_cache.AggregateCache.
    per_request`).
    """

    option = sched_conf.ENABLE_FORBIDDEN_AGGREGATES

    def apply(self, ctxt, request_spec) -> bool:
        admin = (ctxt or nova_context.get_admin_context()).elevated()
        index = state.states().sources.aggregates.traits(admin)
        if not index.required:
            return True
        requested = nova_utils.ResourceRequest.from_request_spec(
            request_spec).all_required_traits
        forbidden = index.forbidden(requested)
        # every one, however many (as nova's isolate_aggregates): no host
        # filter would keep the request out of the others
        # (max_query_aggregates caps the query filter only)
        if forbidden:
            base.forbid_aggregates(request_spec, forbidden)
            LOG.debug('%(name)s added member_of=!in:%(aggs)s (request '
                      'requires %(traits)s)',
                      {'name': self.name, 'aggs': ','.join(forbidden),
                       'traits': sorted(requested) or 'no trait'})
        return True
