"""The scheduler's cached copy of the scopes defined by host aggregates."""

import threading
import time
import typing

from oslo_log import log as logging

from nova import objects
from nova_scoped_policies import topology as topo

LOG = logging.getLogger(__name__)


class AggregateTopologySource:
    """Reads every host aggregate at most once per refresh interval.

    :param refresh_interval: returns the current interval in seconds (read
        each time, so a changed option takes effect).
    :param clock: monotonic clock, replaceable in tests.
    """

    def __init__(self, refresh_interval: typing.Callable[[], int],
                 clock: typing.Callable[[], float] = time.monotonic) -> None:
        self._interval = refresh_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._topology: typing.Optional[topo.Topology] = None
        self._loaded_at = 0.0
        self._reported: typing.FrozenSet[str] = frozenset()

    def get(self, context) -> topo.Topology:
        """The topology, reloaded from the API database when stale.

        :param context: an admin request context.
        """
        with self._lock:
            now = self._clock()
            if (self._topology is None
                    or now - self._loaded_at >= self._interval()):
                self._topology = self._load(context)
                self._loaded_at = now
            return self._topology

    def invalidate(self) -> None:
        with self._lock:
            self._topology = None

    def _load(self, context) -> topo.Topology:
        aggregates = objects.AggregateList.get_all(context)
        topology = topo.from_aggregates(
            topo.AggregateInfo(agg.uuid, agg.name, agg.hosts or (),
                               agg.metadata or {})
            for agg in aggregates)
        # Warn once per problem, not at every refresh.
        problems = frozenset(topology.problems)
        for problem in sorted(problems - self._reported):
            LOG.warning('Scoped policies topology: %s', problem)
        self._reported = problems
        return topology
