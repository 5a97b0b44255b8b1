"""The scheduler's cached copy of the host aggregates.

One load serves the scope topology (``policy_scope`` metadata) and the
trait index of forbidden aggregates (``trait:X=required`` metadata).

How fresh it is depends on whether an aggregate listener runs in the
process (``listened``, the nova seam's):

* with one, a change reaches the copy one notification's delivery late;
* without one, the copy may be ``aggregate_refresh_interval`` old. The
  trait index, which isolates hosts, is then read from the API database
  for every request (``read_traits``), and the scope topology is
  compared with nova-scheduler's own view of the candidates' aggregates
  (``HostState.aggregates``, which nova keeps current) once per request:
  :meth:`AggregateCache.behind` reloads it when they differ.
"""

import threading
import time
import typing

from oslo_log import log as logging

from nova import objects
from nova_scoped_policies.db import records
from nova_scoped_policies.engine import forbidden_aggregates
from nova_scoped_policies import topology as topo
from nova_scoped_policies.topology import model as topo_model

LOG = logging.getLogger(__name__)
_RELEVANT_KEYS = (topo.SCOPE_KEY, topo_model.LICENSE_KEY)
"""Metadata keys (prefixes) that make an aggregate part of the topology:
``policy_scope`` and its settings, ``license:<PRODUCT>``."""


def relevant_metadata(metadata: typing.Mapping[str, str]
                      ) -> typing.FrozenSet[typing.Tuple[str, str]]:
    """The metadata of an aggregate that the topology reads."""
    return frozenset((k, str(v)) for k, v in (metadata or {}).items()
                     if k.startswith(_RELEVANT_KEYS))


def differences(known: typing.Mapping[str, topo.AggregateInfo],
                wanted: typing.AbstractSet[str],
                seen: typing.Iterable[topo.AggregateInfo],
                shown: typing.AbstractSet[str],
                candidates: typing.AbstractSet[str]) -> typing.List[str]:
    """Where nova-scheduler's view of the candidates' aggregates differs
    from a copy, for what the topology reads (pure).

    :param known: the copy's aggregates that the topology reads (uuid ->
        its hosts, a frozenset, and metadata).
    :param wanted: uuids the topology reads without their metadata
        saying so (the stored scopes' aggregates).
    :param seen: nova's aggregates to compare.
    :param shown: the uuids of every aggregate of a candidate host in
        nova's view.
    :param candidates: the candidate hosts' names.
    :returns: one line per difference, for the log.
    """
    found = []
    for agg in seen:
        mine = known.get(agg.uuid)
        meta = relevant_metadata(agg.metadata)
        if mine is None:
            if meta or agg.uuid in wanted:
                found.append(f'aggregate {agg.name} ({agg.uuid}) is new')
        elif meta != relevant_metadata(mine.metadata):
            found.append(f'aggregate {agg.name} ({agg.uuid}) metadata '
                         'changed')
        elif frozenset(agg.hosts) != mine.hosts:
            found.append(f'aggregate {agg.name} ({agg.uuid}) hosts changed')
    for uuid, mine in known.items():
        if uuid not in shown and not mine.hosts.isdisjoint(candidates):
            gone = sorted(mine.hosts & candidates)
            found.append(f'aggregate {mine.name} ({uuid}) no longer holds '
                         f'{", ".join(gone[:3])}'
                         + (f' and {len(gone) - 3} more'
                            if len(gone) > 3 else ''))
    return found


class AggregateCache:
    """Reads every host aggregate at most once per refresh interval.

    :param refresh_interval: returns the current interval in seconds (read
        each time, so a changed option takes effect).
    :param clock: monotonic clock, replaceable in tests.
    :param stored: returns the scope records of the policy store, read at
        each refresh (default: none).
    :param listened: whether an aggregate listener keeps this copy fresh
        now (default: always, the behaviour of a copy whose every change
        is told).
    :param read_traits: reads the aggregates with ``trait:`` metadata
        now, for :meth:`traits` while no listener runs (default: none,
        the cached index serves).
    """

    def __init__(self, refresh_interval: typing.Callable[[], int],
                 clock: typing.Callable[[], float] = time.monotonic,
                 stored: typing.Callable[
                     [], typing.List[records.ScopeRecord]] = list,
                 listened: typing.Callable[[], bool] = lambda: True,
                 read_traits: typing.Optional[typing.Callable[
                     [typing.Any], typing.List[topo.AggregateInfo]]] = None
                 ) -> None:
        self._interval = refresh_interval
        self._stored = stored
        self._clock = clock
        self._listened = listened
        self._read_traits = read_traits
        self._lock = threading.Lock()
        self._topology: typing.Optional[topo.Topology] = None
        self._traits: typing.Optional[
            forbidden_aggregates.TraitAggregates] = None
        self._known: typing.Dict[str, topo.AggregateInfo] = {}
        self._wanted: typing.FrozenSet[str] = frozenset()
        # nova's aggregate objects found equal to the copy since its load
        # (held, so that their ids are not reused), and the differences
        # left after a reload (nova's own view is the one behind)
        self._verified: typing.Dict[int, typing.Any] = {}
        self._accepted: typing.FrozenSet[str] = frozenset()
        self._loaded_at = 0.0
        self._reported: typing.FrozenSet[str] = frozenset()
        self._reported_now: typing.FrozenSet[str] = frozenset()

    @property
    def per_request(self) -> bool:
        """Whether :meth:`traits` reads the API database for every
        request (no listener keeps the copy fresh)."""
        return self._read_traits is not None and not self._listened()

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
        """The ``trait:X=required`` index: from the cached load while a
        listener keeps it fresh, else read now (:attr:`per_request`)."""
        if not self.per_request:
            return self._snapshot(context)[1]
        found = forbidden_aggregates.index(self._read_traits(context))
        problems = frozenset(found.problems)
        for problem in sorted(problems - self._reported_now):
            LOG.warning('Scoped policies aggregates: %s', problem)
        self._reported_now = problems
        return found

    def behind(self, context, view: typing.Callable[[], typing.Tuple[
            typing.AbstractSet[typing.Any], typing.AbstractSet[str]]]
               ) -> bool:
        """Reload the copy when nova-scheduler's view of the candidates'
        aggregates shows it behind, for what the topology reads; never
        while a listener keeps it fresh.

        A difference that a reload does not end is nova's view lagging
        (its aggregates reach each scheduler by an RPC cast): it is
        logged and reloads nothing again.

        :param context: an admin request context.
        :param view: returns nova's aggregate objects of the candidate
            hosts (every ``HostState.aggregates``, as a set) and the
            candidates' names; called only without a listener.
        :returns: whether it reloaded (the request's evaluation, built on
            the old copy, must be built again).
        """
        if self._listened():
            return False
        with self._lock:
            if self._topology is None:
                # told stale since the request read it
                self._load(context)
                self._loaded_at = self._clock()
                return True
            seen, candidates = view()
            fresh = [agg for agg in seen if id(agg) not in self._verified]
            shown = {str(agg.uuid) for agg in seen}
            found = differences(self._known, self._wanted,
                                map(_info, fresh), shown, candidates)
            if not found or self._accepted.issuperset(found):
                self._verified.update((id(agg), agg) for agg in fresh)
                return False
            LOG.info('Scoped policies: nova-scheduler\'s view of the '
                     'aggregates differs from the cached copy (%s); '
                     'reloading it', '; '.join(found[:5]))
            self._load(context)
            self._loaded_at = self._clock()
            left = differences(self._known, self._wanted, map(_info, seen),
                               shown, candidates)
            self._accepted = frozenset(left)
            for line in left:
                LOG.warning('Scoped policies: nova-scheduler\'s view of the '
                            'aggregates lags the API database: %s', line)
            return True

    def _snapshot(self, context):
        with self._lock:
            now = self._clock()
            if (self._topology is None
                    or now - self._loaded_at >= self._interval()):
                self._load(context)
                self._loaded_at = now
            return self._topology, self._traits

    def _load(self, context) -> None:
        aggregates = [_info(agg)
                      for agg in objects.AggregateList.get_all(context)]
        stored = self._stored()
        self._topology = topo.from_aggregates(aggregates, stored)
        self._traits = forbidden_aggregates.index(aggregates)
        self._wanted = frozenset(uuid for record in stored
                                 for uuid in record.aggregates)
        self._known = {agg.uuid: agg for agg in aggregates
                       if relevant_metadata(agg.metadata)
                       or agg.uuid in self._wanted}
        self._verified = {}
        # Warn once per problem, not at every refresh.
        problems = frozenset(self._topology.problems) | frozenset(
            self._traits.problems)
        for problem in sorted(problems - self._reported):
            LOG.warning('Scoped policies aggregates: %s', problem)
        self._reported = problems


def _info(agg) -> topo.AggregateInfo:
    """nova's aggregate as plain data, its hosts a frozenset."""
    return topo.AggregateInfo(str(agg.uuid), agg.name,
                              frozenset(agg.hosts or ()),
                              dict(agg.metadata or {}))


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

    per_request = False

    def invalidate(self) -> None:
        """Nothing to reload."""

    def behind(self, context, view) -> bool:
        """Never behind: nothing to reload."""
        return False

    def get(self, context) -> topo.Topology:
        return self.topology

    def traits(self, context) -> forbidden_aggregates.TraitAggregates:
        return self.trait_index
