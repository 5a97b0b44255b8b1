"""The contract of our pre-placement request filters: one call."""

import abc
import typing

from oslo_config import cfg
from oslo_log import log as logging

from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.nova_seam import objects as seam_objects

CONF = cfg.CONF
LOG = logging.getLogger(__name__)


class RequestFilter(abc.ABC):
    """Edits a RequestSpec before nova asks Placement for candidates.

    Implementations name the ``[scoped_policies]`` option that enables them;
    nova calls them like its own request filters, once per request.
    """

    #: the boolean option of ``[scoped_policies]`` that enables the filter
    option: str = ''

    @property
    def enabled(self) -> bool:
        return bool(getattr(CONF[sched_conf.GROUP_NAME], self.option))

    def __call__(self, ctxt, request_spec) -> bool:
        """Nova's request-filter signature.

        :param ctxt: the request context.
        :param request_spec: the RequestSpec to edit in place.
        :returns: whether the filter ran.
        """
        if not self.enabled:
            return False
        return self.apply(ctxt, request_spec)

    @abc.abstractmethod
    def apply(self, ctxt, request_spec) -> bool:
        """Edit ``request_spec``; return True when the filter ran.

        :param ctxt: the request context.
        :param request_spec: the RequestSpec to edit in place.
        """

    @property
    def name(self) -> str:
        return type(self).__name__


destination = seam_objects.destination
"""The spec's Destination, created when absent."""

forbid_aggregates = seam_objects.forbid_aggregates
"""Add uuids to the spec's ``member_of=!in:`` aggregates: the one write
that does not go through nova's public methods (its docstring says why,
with the figure)."""


def too_many(name: str, what: str, uuids: typing.Collection[str]) -> bool:
    """True (and a log line) when ``uuids`` exceed max_query_aggregates."""
    limit = CONF[sched_conf.GROUP_NAME].max_query_aggregates
    if len(uuids) <= limit:
        return False
    LOG.info('%(name)s: %(n)d aggregates for %(what)s exceed '
             '[%(group)s] max_query_aggregates=%(limit)d; left to the host '
             'filters', {'name': name, 'n': len(uuids), 'what': what,
                         'group': sched_conf.GROUP_NAME, 'limit': limit})
    return True
