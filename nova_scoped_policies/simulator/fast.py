"""The fast engine: nova's handlers run once per class of equal hosts.

``simulate --engine fast`` makes the same decisions as the default engine
(:mod:`nova_scoped_policies.simulator.runner`) at a fraction of the cost,
for clouds of thousands of hosts. What it keeps: our request filters, nova's
``resources_from_request_spec``, the fake Placement's own query parser and
candidate rules, the configured filters and weighers run through nova's
filter and weight handlers, the claim, HostStates consumed by
multi-instance boots, and all-or-nothing boots. What it changes: it talks
to the embedded Placement in-process instead of over HTTP (and builds the
world in the model directly), and it hands nova's handlers one
representative HostState per *class* of hosts instead of every host.

Why that gives the same answer. The filters and weighers see a host
through its name only where nova's IsolatedHostsFilter lists it (and
where a flavor asks ComputeCapabilitiesFilter about it: every host then
stands alone), its
domains in every scope, its aggregates' metadata (the weight multipliers),
its HostState (totals, usage, servers, I/O in flight) and the members
placed on it; Placement through its traits, aggregates, inventories and
usage. Hosts alike in all of these therefore are candidates alike and get
the same verdict and the same raw weights; nova's normalisation depends
only on the minimum and maximum raw weight, which the representatives
carry. A host moves between classes as servers land on it, leave it, or a
request consumes its HostState. Per request, classes are merged further
when their domains hold the same numbers of members in the scopes the
request's items read, as the plugins say they read them
(``Evaluation.distinguished``: a targeted scope by its domains, any other
by member counts; :class:`_Likeness`). A host holding a member is its own
representative only where something reads the host itself: an item of
the host scope, or nova's group filters and weighers for a group with a
policy (and the instance's own host, on a move). The candidates a class
stands for are then tried in the order nova's stable sort gives: weight
first, then host-name order. The hosts nova's HostManager leaves out of
Placement's answer (a move's own host, a requested host's others, the
hosts that failed: :class:`~.specs.Reach`) are no candidates of any class.
A stack's server is evaluated under several documents at once, each with
its own members: classes are merged where they are alike for every one.
``tests/functional/test_fast_engine.py`` runs every example and randomised
scenarios through both engines and requires identical reports.
"""

import bisect
import heapq
import itertools
import typing
import urllib.parse

import webob.multidict

from nova.scheduler import host_manager
from nova.scheduler import weights as nova_weights
from nova import weights as nova_base_weights
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import fake
from nova_scoped_policies.placement import model
from nova_scoped_policies.policy.model import HOST_SCOPE as HOST
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.simulator import embedded
from nova_scoped_policies.simulator import runner
from nova_scoped_policies.simulator import specs


class _Key(typing.NamedTuple):
    """What the hosts of a class share (:meth:`HostClasses.key`)."""

    aggregates: typing.FrozenSet[str]
    traits: typing.FrozenSet[str]
    inventories: typing.Tuple[typing.Tuple[str, int], ...]   # totals
    isolated: bool              # nova's IsolatedHostsFilter lists it
    used: typing.Tuple[typing.Tuple[str, int], ...]   # in Placement
    node: runner.Node           # the HostState


class _Class:
    """Hosts that no filter or weigher can tell apart, and Placement
    neither: the same aggregates, traits and inventories, the same usage
    in Placement and the same HostState (what nova's weighers read). Hosts
    move between classes as servers come and go.

    :param key: what its hosts share.
    :param metadata: the metadata of their aggregates (weight multipliers).
    :param domains: scope -> their domains in it.
    """

    __slots__ = ('key', 'serial', 'hosts', 'alike', 'domains',
                 'every_domain', 'idle')
    _serials = itertools.count()

    def __init__(self, key: _Key,
                 metadata: typing.FrozenSet[typing.Tuple[str, str]],
                 domains: typing.Mapping[str, typing.Tuple[str, ...]]
                 ) -> None:
        self.key = key
        self.serial = next(self._serials)
        self.hosts: typing.List[str] = []   # in host-name order
        # what filters and weighers read besides the domains: the
        # aggregates' metadata, the inventories, the isolation and the
        # HostState (not Placement's usage, nor traits)
        self.alike = (metadata, key.inventories, key.isolated, key.node)
        self.domains = domains
        self.every_domain = frozenset(d for found in domains.values()
                                      for d in found)
        # the scopes a request reads -> the class's key for a request
        # with no member in any of its domains (see _Likeness.key)
        self.idle: typing.Dict[tuple, tuple] = {}


class _Candidates:
    """One boot's ``GET /allocation_candidates``, evaluated lazily.

    A host is a candidate when its class matches the query's traits and
    ``member_of`` and the resources fit (and, with a ``limit``, when
    Placement listed it), as they were when the boot began: nova keeps
    Placement's answer for the whole boot, so a host the boot has claimed
    stays a candidate (weighed, and tried: its claim fails when it is
    full) though it moved to a class that no longer fits. Other hosts'
    usage does not change during a boot.

    :param sim: the host strategy (:class:`HostClasses`).
    :param query: the boot's validated query.
    :param reach: the hosts nova's HostManager leaves out of Placement's
        answer (:class:`specs.Reach`).
    """

    def __init__(self, sim: 'HostClasses', query: model.CandidateQuery,
                 reach: specs.Reach = specs.Reach()) -> None:
        self.sim = sim
        self.query = query
        self.reach = reach
        self._fit: typing.Dict[int, bool] = {}   # class serial -> fits
        self._resources = tuple(sorted(query.resources.items()))
        # the hosts this boot has claimed (candidates until it ends)
        self.kept: typing.Set[str] = set()
        sim.settle()
        self._limited: typing.Optional[typing.Set[str]] = None
        if query.limit is not None:
            self._limited = self._first(query.limit)
        # the classes that fit, kept up to date with the classes the
        # boot's claims create (see firsts)
        self._fitting = {cls.serial: cls for cls in sim.classes.values()
                         if self.fits(cls)}
        self._seen = len(sim.created)

    def _first(self, limit: int) -> typing.Set[str]:
        """The hosts of Placement's answer with a ``limit``: the first
        ``limit`` that match and fit, in provider-uuid order (the fake's
        :meth:`~.model.PlacementModel.candidates`), asked of their
        classes: a walk that stops at the ``limit``-th, instead of every
        provider's traits, aggregates and usage for every boot."""
        found: typing.Set[str] = set()
        if limit <= 0:
            return found
        class_of = self.sim.class_of
        fits = self.fits
        for host in self.sim.by_uuid():
            if fits(class_of[host]):
                found.add(host)
                if len(found) == limit:
                    break
        return found

    def fits(self, cls: _Class) -> bool:
        """Do the class's hosts match the query and have room for it?"""
        found = self._fit.get(cls.serial)
        if found is None:
            sim = self.sim
            provider = sim.placement.providers[sim.uuid_of[cls.hosts[0]]]
            found = self._fit[cls.serial] = (
                sim.placement.matches(provider, self.query)
                and sim.room(cls.key, provider, self._resources))
        return found

    def firsts(self) -> typing.List[typing.Tuple[_Class, int]]:
        """Every class with a candidate, and its first one."""
        sim = self.sim
        sim.settle()
        fitting = self._fitting
        for cls in sim.created[self._seen:]:
            if self.fits(cls):
                fitting[cls.serial] = cls
        self._seen = len(sim.created)
        emptied = [serial for serial, cls in fitting.items()
                   if not cls.hosts]   # their hosts moved to other classes
        for serial in emptied:
            del fitting[serial]
        if self._limited is None and self.reach.everywhere:
            # every host of a class that fits is a candidate
            found = [(cls, 0) for cls in fitting.values()]
        else:
            found = []
            for cls in fitting.values():
                at = self.next_member(cls, ())
                if at < len(cls.hosts):
                    found.append((cls, at))
        others = set()
        for host in self.kept:
            cls = sim.class_of[host]
            if cls.serial not in fitting and cls.serial not in others:
                # claimed here, now in a class that does not fit
                others.add(cls.serial)
                at = self.next_member(cls, ())
                if at < len(cls.hosts):
                    found.append((cls, at))
        return found

    def next_member(self, cls: _Class, special: typing.AbstractSet[str],
                    position: int = 0) -> int:
        """Index in ``cls.hosts`` of the first candidate not in ``special``
        at or after ``position``; ``len(cls.hosts)`` when there is none.
        """
        hosts = cls.hosts
        listed = self.listed
        kept = None if self.fits(cls) else self.kept
        while position < len(hosts) and (
                hosts[position] in special or not listed(hosts[position])
                or (kept is not None and hosts[position] not in kept)):
            position += 1
        return position

    def listed(self, host: str) -> bool:
        """Within Placement's ``limit``, if the query had one, and not
        left out by nova's HostManager."""
        return (self._limited is None or host in self._limited) and \
            self.reach.allows(host)

    def candidate(self, host: str) -> bool:
        """Is ``host`` among the boot's candidates?"""
        return (host in self.kept or self.fits(self.sim.class_of[host])) \
            and self.listed(host)

    def __iter__(self) -> typing.Iterator[host_manager.HostState]:
        """Every candidate, in host-name order (for failure reports)."""
        self.sim.settle()
        names = sorted((h for c in self.sim.classes.values()
                        for h in c.hosts if self.candidate(h)),
                       key=self.sim.order.get)
        return (self.sim.host_state(h, self.sim.uuid_of[h])
                for h in names)


class _Likeness:
    """Which classes one request cannot tell apart either.

    The plugins say which domains each item tells apart
    (``Evaluation.distinguished``, :meth:`PolicyPlugin.distinguishes`):
    every domain of a scope a policy targets, else the domains holding
    members, which an untargeted item reads only through their member
    count (at most *k* per domain, all in one, at least *N* domains, the
    soft weights). So for this request two hosts whose domains hold the
    same counts, in the scopes the items read, are alike; classes alike
    in that and in what the filters and weighers read besides
    (:attr:`_Class.alike`) share one representative.

    :param evaluation: the request's evaluation (None: no policies).
    """

    def __init__(self, evaluation) -> None:
        # scope -> member counts per domain; None: domains by identity
        self.scopes: typing.List[typing.Tuple[
            str, typing.Optional[typing.Mapping[str, int]]]] = []
        # the domains holding members, in the scopes read by count
        self.busy: typing.FrozenSet[str] = frozenset()
        if evaluation is None:
            return
        # a stack's server: one evaluation per document, each with its
        # own members
        for part in evaluation.parts:
            ctx = part.context
            for scope, domains in sorted(part.distinguished().items()):
                if scope != HOST:
                    self.scopes.append((scope, None if domains is None
                                        else ctx.counts(scope)))
        self.busy = frozenset(d for _, counts in self.scopes if counts
                              for d in counts)
        self._read = tuple((scope, counts is None)
                           for scope, counts in self.scopes)

    def key(self, cls: _Class) -> tuple:
        if not self.scopes:
            return cls.alike
        if cls.every_domain.isdisjoint(self.busy):
            # no member in its domains: the key depends only on the
            # scopes read, and is kept with the class
            found = cls.idle.get(self._read)
            if found is None:
                found = cls.idle[self._read] = self._key(cls)
            return found
        return self._key(cls)

    def _key(self, cls: _Class) -> tuple:
        parts = [cls.alike]
        for scope, counts in self.scopes:
            domains = cls.domains.get(scope, ())
            if counts is None:
                parts.append(domains)
            elif len(domains) == 1:
                parts.append(counts.get(domains[0], 0))
            else:
                parts.append(tuple(sorted(counts.get(d, 0)
                                          for d in domains)))
        return tuple(parts)


def _reads_each_host(spec) -> bool:
    """Does the flavor ask nova's ComputeCapabilitiesFilter about a
    HostState attribute other than those alike within a class (a
    ``capabilities:hypervisor_hostname`` extra spec, or an unscoped one
    naming such an attribute)?

    :param spec: the RequestSpec.
    """
    flavor = spec.flavor
    if 'extra_specs' not in flavor:
        return False
    for key in flavor.extra_specs:
        scope = key.split(':')
        if len(scope) > 1 and scope[0] != 'capabilities':
            continue
        attribute = scope[1] if len(scope) > 1 else scope[0]
        if len(scope) == 1 and attribute not in _STATE_ATTRIBUTES:
            continue     # nova ignores it: no such attribute
        if attribute not in _ALIKE_ATTRIBUTES:
            return True
    return False


_STATE_ATTRIBUTES = frozenset(dir(host_manager.HostState('h', 'n', None)))
"""What a HostState has, its class's attributes included (for unscoped
extra specs)."""
_ALIKE_ATTRIBUTES = runner.ALIKE_ATTRIBUTES.union(runner.Node._fields)
"""The HostState attributes alike within a class."""


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
        self.classes: typing.Dict[_Key, _Class] = {}
        self.class_of: typing.Dict[str, _Class] = {}
        # every class in the order it was made (an emptied one is left
        # with no hosts), for readers that follow the new ones
        self.created: typing.List[_Class] = []
        # host -> what never changes of it: (aggregates, traits,
        # inventories and whether nova's IsolatedHostsFilter lists it)
        self._static: typing.Dict[str, tuple] = {}
        self._dirty: typing.Set[str] = set()
        self._room: typing.Dict[tuple, bool] = {}
        self._boot: typing.Optional[_Candidates] = None   # the boot's
        # (weigher's index, host) -> its multiplier (see weigh)
        self._multipliers: typing.Dict[typing.Tuple[int, str], float] = {}
        self._version = fake.parse_version(runner.QUERY_VERSION)

    def create(self, member_of: typing.Mapping[str, typing.List[str]],
               progress: runner.Progress) -> None:
        """Create the hosts' providers in the fake's model, as
        :meth:`runner.EveryHost.create` does through its API, without
        a request per provider and field."""
        placement = self.placement
        for host in self.sim.scenario.hosts:
            for trait in host.traits:
                if not placement.known_trait(trait):
                    placement.add_trait(trait)
            provider = placement.add_provider(host.uuid, host.name)
            placement.set_inventories(
                host.uuid, provider.generation,
                {rc: model.inventory({'total': n})
                 for rc, n in host.resources.items()})
            placement.set_traits(host.uuid, provider.generation,
                                 set(host.traits) | set(runner.NOVA_TRAITS))
            if member_of.get(host.name):
                placement.set_aggregates(host.uuid, provider.generation,
                                         member_of[host.name])
            progress.advance()

    def build(self) -> None:
        """Group the hosts the fake Placement now holds into classes."""
        sim = self.sim
        topology = sim.aggregates.topology
        self._scopes = [s for s in topology.scope_names if s != 'host']
        self._metadata = {a.uuid: a.metadata
                          for a in sim.scenario.aggregates}
        isolated = set(sim.scenario.nova_config.get('isolated_hosts') or ())
        shared: typing.Dict[tuple, tuple] = {}
        for host in sorted(self.uuid_of, key=self.order.get):
            provider = self.placement.providers[self.uuid_of[host]]
            static = (frozenset(provider.aggregates),
                      frozenset(provider.traits),
                      tuple(sorted(sim.resources_of[host].items())),
                      host in isolated)
            self._static[host] = shared.setdefault(static, static)
            self._join(host, self.key(host))
        self.placement.changed.clear()

    def by_uuid(self) -> typing.List[str]:
        """Every host, in the order of its provider's uuid."""
        found = getattr(self, '_by_uuid', None)
        if found is None:
            found = self._by_uuid = sorted(self.uuid_of,
                                           key=self.uuid_of.get)
        return found

    def key(self, host: str) -> _Key:
        """What the host's class shares."""
        used = self.placement.used(self.uuid_of[host])
        return _Key(*self._static[host],
                    tuple(sorted((rc, n) for rc, n in used.items() if n)),
                    self.sim.node(host))

    def _join(self, host: str, key: _Key) -> None:
        cls = self.classes.get(key)
        if cls is None:
            cls = self.classes[key] = _Class(
                key, frozenset(item for agg in key.aggregates
                               for item in self._metadata[agg].items()),
                {s: tuple(sorted(self.sim.aggregates.topology.domains_of(
                    s, host))) for s in self._scopes})
            self.created.append(cls)
        bisect.insort(cls.hosts, host, key=self.order.get)
        self.class_of[host] = cls

    def room(self, key: _Key, provider: model.Provider,
             resources: typing.Tuple[typing.Tuple[str, int], ...]) -> bool:
        """Do ``resources`` fit on the hosts of the class of ``key``
        (``provider`` is one of them)? The answer depends only on their
        inventories and usage (the same for all: see :meth:`create`), so
        it is asked once per inventories, usage and resources."""
        found = self._room.get((key.inventories, key.used, resources))
        if found is None:
            found = self._room[key.inventories, key.used, resources] = \
                self.placement.fits(provider, dict(resources))
        return found

    def touched(self, host: str) -> None:
        """``host``'s HostState changed: its class is found again."""
        self._dirty.add(host)

    def settle(self) -> None:
        """Hosts whose HostState or Placement usage changed move to the
        class they now belong to."""
        changed = self.placement.changed
        if changed:
            by_uuid = self.sim.host_by_uuid
            self._dirty.update(by_uuid[rp] for rp in changed
                               if rp in by_uuid)
            changed.clear()
        order = self.order
        for host in self._dirty:
            cls = self.class_of[host]
            key = self.key(host)
            if key == cls.key:
                continue
            hosts = cls.hosts
            del hosts[bisect.bisect_left(hosts, order[host], key=order.get)]
            if not hosts:
                del self.classes[cls.key]
            self._join(host, key)
        self._dirty.clear()

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
        self._boot = _Candidates(self, query, self.sim.reach(spec))
        return self._boot

    def sorted_hosts(self, spec, candidates: _Candidates, index):
        """The candidates in the order nova would try them."""
        sim = self.sim
        firsts = candidates.firsts()
        evaluation = state.states().evaluation(spec)
        special = self.special(spec, evaluation)
        if _reads_each_host(spec):
            # a filter reads what tells every host apart (its name...):
            # every candidate stands alone, as in the nova engine
            special = {host for cls, _ in firsts for host in cls.hosts
                       if candidates.candidate(host)}
        alike = _Likeness(evaluation)
        # Classes alike for this request share one representative (the
        # first of their first candidates); every special host is its
        # own. Each stands for streams of hosts, in name order: (class,
        # index of its next candidate) or (None, host).
        order = self.order
        crowded = {self.class_of[h].serial for h in special
                   if h in self.class_of}
        stands_for = self._merge(firsts, alike, crowded, candidates,
                                 special)
        for host in special:
            if host in self.class_of and candidates.candidate(host):
                stands_for[host] = [(None, host)]
        representatives = [self.host_state(h, self.uuid_of[h])
                           for h in sorted(stands_for, key=order.get)]
        filtered = sim.filter_handler.get_filtered_objects(
            sim.filters, representatives, spec, index)
        if not filtered:
            return
        weighed = self.weigh(filtered, spec)
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

    def _merge(self, firsts, alike: _Likeness, crowded: typing.Set[int],
               candidates: _Candidates, special: typing.AbstractSet[str]
               ) -> typing.Dict[str, typing.List[tuple]]:
        """The classes of ``firsts`` alike for this request, merged: their
        representative (the first of their first candidates in host-name
        order) -> their streams, (class, index of its next candidate).

        Every class that fits passes here for every instance of a
        request: one loop, each merged group keeping its first host as
        its classes join it.
        """
        order = self.order
        # likeness key -> [order of its first host, the host, streams]
        merged: typing.Dict[tuple, list] = {}
        get = merged.get
        key = alike.key
        for cls, at in firsts:
            if crowded and cls.serial in crowded:
                at = candidates.next_member(cls, special)
                if at == len(cls.hosts):
                    continue
            host = cls.hosts[at]
            position = order[host]
            alike_key = key(cls)
            found = get(alike_key)
            if found is None:
                merged[alike_key] = [position, host, [(cls, at)]]
            else:
                found[2].append((cls, at))
                if position < found[0]:
                    found[0] = position
                    found[1] = host
        return {host: streams for _, host, streams in merged.values()}

    @staticmethod
    def special(spec, evaluation) -> typing.Set[str]:
        """The hosts that are each their own representative: the
        instance's own on a move, and those holding members where
        something reads the host itself (an item of the host scope, or
        nova's group filters and weighers for a group with a policy)."""
        if evaluation is None:
            return set()
        found: typing.Set[str] = set()
        group = spec.instance_group
        for part in evaluation.parts:
            ctx = part.context
            if ctx.current_host:
                found.add(ctx.current_host)
            if HOST in ctx.request.document.scopes or (
                    group is not None and group.policy):
                found.update(ctx.placed_hosts)
        return found

    def weigh(self, hosts, spec) -> typing.List[nova_weights.WeighedHost]:
        """The hosts with their weights, heaviest first, as nova's
        ``HostWeightHandler.get_weighed_objects`` has them: each weigher's
        raw weights, normalised over the hosts (``nova.weights.normalize``),
        times the weigher's multiplier for the host, summed in weigher
        order; then a stable sort. Without the handler's debug logging,
        which formats every weight of every weigher for every instance;
        and a weigher's multiplier for a host is asked once: nova's
        contract has it read the options and the host's aggregates, which
        do not change during a simulation.

        :param hosts: the HostStates that passed the filters.
        :param spec: the RequestSpec.
        """
        weighed = [nova_weights.WeighedHost(host, 0.0) for host in hosts]
        if len(weighed) > 1:
            multipliers = self._multipliers
            for i, weigher in enumerate(self.sim.weighers):
                normalised = list(nova_base_weights.normalize(
                    weigher.weigh_objects(weighed, spec),
                    minval=weigher.minval, maxval=weigher.maxval))
                if not any(normalised):
                    # nothing to add, whatever the multiplier (ours
                    # answer a stand-in for such a request)
                    continue
                for host, weight in zip(weighed, normalised):
                    multiplier = multipliers.get((i, host.obj.host))
                    if multiplier is None:
                        multiplier = multipliers[i, host.obj.host] = \
                            weigher.weight_multiplier(host.obj)
                    host.weight += multiplier * weight
        weighed.sort(key=lambda host: host.weight, reverse=True)
        return weighed

    def claim(self, uuid, host_state, project) -> bool:
        """Claim in the fake in-process; False when it does not fit. The
        host stays a candidate of the boot (see :class:`_Candidates`)."""
        (alloc,) = host_state.allocation_candidates
        claimed = self.placement.claim(
            uuid, {rp: data['resources']
                   for rp, data in alloc['allocations'].items()},
            project, runner.USER)
        if claimed:
            self._boot.kept.add(host_state.host)
        return claimed


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
