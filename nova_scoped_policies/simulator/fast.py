"""The fast engine: nova's handlers run once per class of equal hosts.

``simulate --engine fast`` makes the same decisions as the default engine
(:mod:`nova_scoped_policies.simulator.runner`) at a fraction of the cost,
for clouds of thousands of hosts. What it keeps: our request filters, nova's
``resources_from_request_spec``, the fake Placement's own query parser and
candidate rules, our host filters and weighers run through nova's filter
and weight handlers, the claim, in-flight consumption and all-or-nothing
multi-instance boots. What it changes: it talks to the embedded Placement
in-process instead of over HTTP, and it hands nova's handlers one
representative HostState per *class* of hosts instead of every host.

Why that gives the same answer. Our filters and weighers see a host only
through its name, its domains in every scope, its aggregates' metadata (the
weight multipliers) and the members placed on it. Hosts with the same
aggregates and traits and no member of the group on them (nor the
instance, on a move) therefore get the same verdict and the same raw
weights; nova's normalisation depends only on the minimum and maximum raw
weight, which the representatives carry. A host that holds a member is its
own class. Per request, classes are merged further when they differ only in
domains that hold no member and that no policy targets, in the scopes the
group's policies name (:class:`_Likeness`). The candidates a class stands
for are then tried in the order nova's stable sort gives: weight first,
then host-name order.
``tests/functional/test_fast_engine.py`` runs every example and randomised
scenarios through both engines and requires identical reports.
"""

import collections
import heapq
import itertools
import typing
import urllib.parse

import webob.multidict

from nova.scheduler import host_manager
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import fake
from nova_scoped_policies.placement import model
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.simulator import embedded
from nova_scoped_policies.simulator import runner


class _Class(typing.NamedTuple):
    """Hosts that no filter or weigher of ours can tell apart.

    :param hosts: names, in host-name order.
    :param provider: the fake's provider of the first host (traits and
        aggregates are the same for all).
    :param metadata: the metadata of their aggregates (weight multipliers).
    :param domains: scope -> their domains in it.
    """

    hosts: typing.Tuple[str, ...]
    provider: typing.Any
    metadata: typing.FrozenSet[typing.Tuple[str, str]]
    domains: typing.Mapping[str, typing.Tuple[str, ...]]


class _Candidates:
    """One boot's ``GET /allocation_candidates``, evaluated lazily.

    A host is a candidate when its class matches the query's traits and
    ``member_of`` and its resources fit *as they were when the boot began*.
    Claims of the same boot only add usage, so each answer is cached before
    the host can be claimed (:meth:`candidate` runs before every claim).

    :param sim: the host strategy (:class:`HostClasses`).
    :param query: the boot's validated query.
    """

    def __init__(self, sim: 'HostClasses',
                 query: model.CandidateQuery) -> None:
        self.sim = sim
        self.query = query
        matches = sim.placement.matches
        self.classes = [c for c in sim.classes
                        if matches(c.provider, query)]
        self._matching = {id(c) for c in self.classes}
        self._fit: typing.Dict[str, bool] = {}
        self._limited: typing.Optional[typing.Set[str]] = None
        if query.limit is not None:
            self._limited = {p.name for p in sim.placement.candidates(query)}
        # class -> position of its first host that may still be a
        # candidate (hosts before it are not candidates of this boot)
        self._start: typing.Dict[int, int] = {}
        self._firsts: typing.Optional[
            typing.List[typing.Tuple[_Class, int]]] = None

    def candidate(self, host: str) -> bool:
        """Was ``host`` among the boot's candidates?"""
        found = self._fit.get(host)
        if found is None:
            cls = self.sim.class_of[host]
            if id(cls) not in self._matching:
                found = False
            elif self._limited is not None:
                found = host in self._limited
            else:
                placement = self.sim.placement
                found = placement.fits(
                    placement.providers[self.sim.uuid_of[host]],
                    self.query.resources)
            self._fit[host] = found
        return found

    def first(self, cls: _Class) -> int:
        """Index in ``cls.hosts`` of its first candidate (or the end)."""
        hosts = cls.hosts
        start = self._start.get(id(cls), 0)
        while start < len(hosts) and not self.candidate(hosts[start]):
            start += 1
        # hosts before it are not candidates of this boot
        self._start[id(cls)] = start
        return start

    def firsts(self) -> typing.List[typing.Tuple[_Class, int]]:
        """Every matching class with a candidate, and its first one."""
        if self._firsts is None:
            self._firsts = [(cls, at) for cls, at in
                            ((c, self.first(c)) for c in self.classes)
                            if at < len(cls.hosts)]
        return self._firsts

    def next_member(self, cls: _Class, special: typing.AbstractSet[str],
                    position: int = 0) -> int:
        """Index in ``cls.hosts`` of the first candidate holding no member
        at or after ``position``; ``len(cls.hosts)`` when there is none.
        """
        hosts = cls.hosts
        position = max(position, self.first(cls))
        candidate = self.candidate
        while position < len(hosts) and (hosts[position] in special
                                         or not candidate(hosts[position])):
            position += 1
        return position

    def __iter__(self) -> typing.Iterator[host_manager.HostState]:
        """Every candidate, in host-name order (for failure reports)."""
        names = sorted((h for c in self.classes for h in c.hosts
                        if self.candidate(h)), key=self.sim.order.get)
        return (self.sim.host_state(h, self.sim.uuid_of[h])
                for h in names)


class _Likeness:
    """Which classes one request cannot tell apart either.

    The engine reads a host's domains only in the scopes the group's
    document names, and there only whether a domain holds members (and how
    many) or is the one a policy targets. So for this request a domain
    without members and untargeted is as good as any other; classes whose
    domains differ only in such domains, with the same aggregate metadata
    (the weight multipliers), are alike.

    :param evaluation: the request's evaluation (None: no policies).
    """

    def __init__(self, evaluation) -> None:
        self.scopes: typing.List[str] = []
        self.kept: typing.Dict[str, typing.Optional[typing.Set[str]]] = {}
        if evaluation is None:
            return
        ctx = evaluation.context
        document = ctx.request.document
        targeted = {p.scope for p in document.policies
                    if p.identifier is not None}
        for scope in sorted(document.scopes - {'host'}):
            self.scopes.append(scope)
            # targeted scopes keep every domain
            self.kept[scope] = (None if scope in targeted
                                else set(ctx.counts(scope)))

    def key(self, cls: _Class) -> tuple:
        parts = [cls.metadata]
        for scope in self.scopes:
            domains = cls.domains.get(scope, ())
            kept = self.kept[scope]
            parts.append(domains if kept is None else tuple(
                d if d in kept else '' for d in domains))
        return tuple(parts)


class HostClasses:
    """The host strategy of the fast engine: nova's handlers see one
    representative per class of equal hosts (module docstring), the
    embedded fake Placement is asked in-process.

    :param sim: the simulation it serves.
    :param app: the embedded fake Placement.
    """

    def __init__(self, sim: runner.Simulation,
                 app: fake.FakePlacement) -> None:
        self.sim = sim
        self.app = app
        self.placement = app.model
        self.uuid_of = {h.name: h.uuid for h in sim.scenario.hosts}
        self.order = sim.order
        self.host_state = sim.host_state
        self.classes: typing.List[_Class] = []
        self.class_of: typing.Dict[str, _Class] = {}
        self._version = fake.parse_version(runner.QUERY_VERSION)

    def build(self) -> None:
        """Group the hosts the fake Placement now holds into classes."""
        sim = self.sim
        topology = sim.aggregates.topology
        scopes = [s for s in topology.scope_names if s != 'host']
        groups: typing.Dict[tuple, typing.List[str]] = \
            collections.defaultdict(list)
        # the domains come from the same aggregates: hosts with the same
        # aggregates share them
        for host in sorted(self.uuid_of, key=self.order.get):
            provider = self.placement.providers[self.uuid_of[host]]
            groups[(frozenset(provider.aggregates),
                    frozenset(provider.traits))].append(host)
        metadata = {a.uuid: a.metadata for a in sim.scenario.aggregates}
        for (aggregates, _), hosts in groups.items():
            cls = _Class(tuple(hosts),
                         self.placement.providers[self.uuid_of[hosts[0]]],
                         frozenset(item for agg in aggregates
                                   for item in metadata[agg].items()),
                         {s: tuple(sorted(topology.domains_of(s, hosts[0])))
                          for s in scopes})
            self.classes.append(cls)
            for host in hosts:
                self.class_of[host] = cls

    def query(self, spec) -> _Candidates:
        """The boot's candidates, evaluated lazily from the fake's
        query parser and candidate rules."""
        params = webob.multidict.MultiDict(urllib.parse.parse_qsl(
            self.sim.querystring(spec), keep_blank_values=True))
        try:
            query = self.app.parse_candidate_query(params, self._version)
        except fake.APIError as err:
            raise pc.PlacementError(err.status, 'GET',
                                    '/allocation_candidates', err.detail)
        return _Candidates(self, query)

    def sorted_hosts(self, spec, candidates: _Candidates, index):
        """The candidates in the order nova would try them."""
        sim = self.sim
        evaluation = state.states().evaluation(spec)
        special: typing.Set[str] = set()
        if evaluation is not None:
            special.update(evaluation.context.placed_hosts)
            if evaluation.context.current_host:
                special.add(evaluation.context.current_host)
        alike = _Likeness(evaluation)
        # Classes alike for this request share one representative (the
        # first of their first candidates); every candidate holding a
        # member is its own. Each stands for streams of hosts, in name
        # order: (class, index of its next candidate) or (None, host).
        order = self.order
        crowded = {id(self.class_of[h]) for h in special
                   if h in self.class_of}
        merged: typing.Dict[tuple, typing.List[tuple]] = {}
        for cls, at in candidates.firsts():
            if id(cls) in crowded:
                at = candidates.next_member(cls, special)
                if at == len(cls.hosts):
                    continue
            merged.setdefault(alike.key(cls), []).append((cls, at))
        stands_for: typing.Dict[str, typing.List[tuple]] = {}
        for streams in merged.values():
            first = min((cls.hosts[at] for cls, at in streams),
                        key=order.get)
            stands_for[first] = streams
        for host in special:
            if host in self.class_of and candidates.candidate(host):
                stands_for[host] = [(None, host)]
        representatives = [self.host_state(h, self.uuid_of[h])
                           for h in sorted(stands_for, key=order.get)]
        filtered = sim.filter_handler.get_filtered_objects(
            sim.filters, representatives, spec, index)
        if not filtered:
            return
        weighed = sim.weight_handler.get_weighed_objects(
            sim.weighers, filtered, spec)
        resources = dict(candidates.query.resources)
        for _, tier in itertools.groupby(weighed, key=lambda w: w.weight):
            # nova's sort is stable: equal weights keep host-name order
            heap = []
            for w in tier:
                for cls, at in stands_for[w.obj.host]:
                    host = at if cls is None else cls.hosts[at]
                    heap.append((order[host], host, cls, at))
            heapq.heapify(heap)
            while heap:
                _, host, cls, at = heap[0]
                if cls is not None:
                    at = candidates.next_member(cls, special, at + 1)
                if cls is None or at == len(cls.hosts):
                    heapq.heappop(heap)
                else:
                    following = cls.hosts[at]
                    heapq.heapreplace(heap, (order[following], following,
                                             cls, at))
                host_state = self.host_state(host, self.uuid_of[host])
                # what Placement's allocation request would hold
                host_state.allocation_candidates = [{'allocations': {
                    host_state.uuid: {'resources': resources}}}]
                yield host_state

    def claim(self, uuid, host_state, project) -> bool:
        """Claim in the fake in-process; False when it does not fit."""
        (alloc,) = host_state.allocation_candidates
        return self.placement.claim(
            uuid, {rp: data['resources']
                   for rp, data in alloc['allocations'].items()},
            project, runner.USER)


class FastSimulation(runner.Simulation):
    """A :class:`runner.Simulation` with the :class:`HostClasses`
    strategy on the embedded fake Placement, called in-process (no
    method of the simulation is overridden).

    :param scenario: the validated scenario.
    :param app: the embedded fake Placement.
    """

    def __init__(self, scenario, app: fake.FakePlacement) -> None:
        super().__init__(scenario, embedded.InProcessClient(app),
                         hosts=lambda sim: HostClasses(sim, app))
