"""The scheduler's cached copy of the host aggregates.

One load serves the scope topology (``policy_scope`` metadata) and the
trait index of forbidden aggregates (``trait:X=required`` metadata).
"""

import threading
import time
import typing

from oslo_log import log as logging

from nova import objects
from nova_scoped_policies.db import records
from nova_scoped_policies.engine import forbidden_aggregates
from nova_scoped_policies import topology as topo

LOG = logging.getLogger(__name__)


class AggregateCache:
    """Reads every host aggregate at most once per refresh interval.

    :param refresh_interval: returns the current interval in seconds (read
        each time, so a changed option takes effect).
    :param clock: monotonic clock, replaceable in tests.
    :param stored: returns the scope records of the policy store, read at
        each refresh (default: none).
    """

    def __init__(self, refresh_interval: typing.Callable[[], int],
                 clock: typing.Callable[[], float] = time.monotonic,
                 stored: typing.Callable[
                     [], typing.List[records.ScopeRecord]] = list
                 ) -> None:
        self._interval = refresh_interval
        self._stored = stored
        self._clock = clock
        self._lock = threading.Lock()
        self._topology: typing.Optional[topo.Topology] = None
        self._traits: typing.Optional[
            forbidden_aggregates.TraitAggregates] = None
        self._loaded_at = 0.0
        self._reported: typing.FrozenSet[str] = frozenset()

    def invalidate(self) -> None:
        """Reload at the next read (nova told us an aggregate changed)."""
        with self._lock:
            self._topology = None

    def get(self, context) -> topo.Topology:
        """The topology, reloaded from the API database when stale.

        :param context: an admin request context.
        """
        return self._snapshot(context)[0]

    def traits(self, context) -> forbidden_aggregates.TraitAggregates:
        """The ``trait:X=required`` index, from the same cached load."""
        return self._snapshot(context)[1]

    def _snapshot(self, context):
        with self._lock:
            now = self._clock()
            if (self._topology is None
                    or now - self._loaded_at >= self._interval()):
                self._load(context)
                self._loaded_at = now
            return self._topology, self._traits

    def _load(self, context) -> None:
        aggregates = [
            topo.AggregateInfo(agg.uuid, agg.name, agg.hosts or (),
                               agg.metadata or {})
            for agg in objects.AggregateList.get_all(context)]
        self._topology = topo.from_aggregates(aggregates, self._stored())
        self._traits = forbidden_aggregates.index(aggregates)
        # Warn once per problem, not at every refresh.
        problems = frozenset(self._topology.problems) | frozenset(
            self._traits.problems)
        for problem in sorted(problems - self._reported):
            LOG.warning('Scoped policies aggregates: %s', problem)
        self._reported = problems


class StaticAggregates:
    """The same interface over fixed aggregates (simulations, benchmarks,
    tests).

    :param aggregates: the aggregates.
    :param topology: the topology, when built otherwise than from the
        aggregates' metadata.
    """

    def __init__(self, aggregates: typing.Iterable[topo.AggregateInfo] = (),
                 topology: typing.Optional[topo.Topology] = None) -> None:
        aggregates = list(aggregates)
        self.topology = topology or topo.from_aggregates(aggregates)
        self.trait_index = forbidden_aggregates.index(aggregates)

    def invalidate(self) -> None:
        """Nothing to reload."""

    def get(self, context) -> topo.Topology:
        return self.topology

    def traits(self, context) -> forbidden_aggregates.TraitAggregates:
        return self.trait_index
