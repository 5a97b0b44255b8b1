"""The fast engine: every host a row of columns, every request one pass.

``simulate --engine fast`` makes the same decisions as the nova engine
(:class:`~nova_scoped_policies.simulator.scheduling.EveryHost`) for clouds of
tens of thousands of hosts whose usage differs host by host. What it
keeps: our request filters, nova's ``resources_from_request_spec``, the
fake Placement's own query parser, the configured filters and weighers
(their order, nova's normalisation, the multipliers they read), the claim
in Placement, HostStates consumed by multi-instance boots, all-or-nothing
boots. What it changes: Placement is asked in-process, and the work of a
request over all hosts is array operations (numpy) on columns, updated in
place as servers land and leave:

- Placement's answer: each resource class's capacity, usage, minimum,
  maximum and step as columns, each trait and aggregate of the query as
  a mask; ``limit`` takes the first hosts in provider-uuid order, as the
  fake Placement lists them. The answer is kept for the whole boot, as
  nova keeps it.
- nova's filters, each as the hosts it can tell apart: a filter reading
  only what every simulated host shares (:data:`UNIFORM_FILTERS`) is
  asked about one host and its verdict holds for all; nova's group
  filters about one host without members and each host holding one;
  ours through the engine's checks, per domain (:meth:`Check.on_domains`)
  or per host at C speed; any other filter about every host, as nova
  asks.
- nova's weighers: the raw weights of nova's resource weighers from the
  HostState columns (:data:`COLUMN_WEIGHERS`), nova's group weighers
  and :data:`UNIFORM_WEIGHERS` as the filters above, ours from the
  engine, any other per host; then nova's clamping and normalisation,
  each weigher's per-host multiplier (asked once per set of aggregate
  metadata) and the sum in weigher order, as float64 operations in the
  order nova does them, so the same floats; the hosts are tried heaviest
  first, equal weights in host-name order (nova's stable sort over the
  candidates in name order).

``tests/functional/test_fast_engine.py`` runs every example and seeded
random scenarios through both engines and requires identical reports;
``tests/functional/test_agreement.py`` does so on the benchmarks' worlds.
"""

import collections.abc
import typing
import urllib.parse

import numpy as np
from oslo_config import cfg
import webob.multidict

from nova.scheduler.filters import affinity_filter
from nova.scheduler.filters import compute_capabilities_filter
from nova.scheduler.filters import compute_filter
from nova.scheduler.filters import image_props_filter
from nova.scheduler import host_manager
from nova.scheduler import weights as nova_weights
from nova.scheduler.weights import affinity as affinity_weights
from nova.scheduler.weights import compute as compute_weights
from nova.scheduler.weights import cpu
from nova.scheduler.weights import cross_cell
from nova.scheduler.weights import disk
from nova.scheduler.weights import hypervisor_version
from nova.scheduler.weights import image_props
from nova.scheduler.weights import io_ops
from nova.scheduler.weights import metrics
from nova.scheduler.weights import num_instances
from nova.scheduler.weights import pci
from nova.scheduler.weights import ram
from nova import weights as nova_base_weights
from nova_scoped_policies.engine import context as engine_context
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import fake
from nova_scoped_policies.placement import model
from nova_scoped_policies.policy.model import HOST_SCOPE as HOST
from nova_scoped_policies.scheduler.filters import base as our_filters
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.scheduler.weights import base as our_weighers
from nova_scoped_policies.simulator import embedded
from nova_scoped_policies.simulator import runner
from nova_scoped_policies.simulator import scheduling
from nova_scoped_policies.simulator import specs

CONF = cfg.CONF
_IDLE = 'idle'
"""The key that stands for every domain without members."""
_KEPT = 4096
"""Parsed queries and matched masks kept at the most (then forgotten)."""
UNIFORM_FILTERS = (compute_filter.ComputeFilter,
                   image_props_filter.ImagePropertiesFilter)
"""nova filters whose verdict reads only what every simulated host shares
(an enabled compute service heard from, libvirt's guests): one host's
verdict is every host's. ComputeCapabilitiesFilter joins them for a
flavor whose extra specs read only such attributes (:func:`_uniform`)."""
GROUP_FILTERS = (affinity_filter.ServerGroupAffinityFilter,
                 affinity_filter.ServerGroupAntiAffinityFilter)
"""nova's group filters: a host's verdict depends on the group's members
on it and on whether it is one of the group's hosts, nothing else."""
COLUMN_WEIGHERS: typing.Dict[type, typing.Callable[['_Nodes', np.ndarray],
                                                   np.ndarray]] = {
    ram.RAMWeigher: lambda n, at: n.free_ram_mb[at],
    cpu.CPUWeigher: lambda n, at: n.vcpus_free[at],
    disk.DiskWeigher: lambda n, at: n.free_disk_mb[at],
    io_ops.IoOpsWeigher: lambda n, at: n.num_io_ops[at] if n.busy else None,
    num_instances.NumInstancesWeigher: lambda n, at: n.num_instances[at],
}
"""nova's resource weighers: their ``_weigh_object`` as columns of the
HostStates (``host_state.free_ram_mb``, ``vcpus_total *
cpu_allocation_ratio - vcpus_used``, ...)."""
UNIFORM_WEIGHERS = (metrics.MetricsWeigher, pci.PCIWeigher,
                    compute_weights.BuildFailureWeigher,
                    cross_cell.CrossCellWeigher,
                    hypervisor_version.HypervisorVersionWeigher)
"""nova weighers that read only what every simulated host shares (no
metrics, no PCI devices, no failed builds, one cell, one hypervisor);
ImagePropertiesWeigher joins them when ``[filter_scheduler]
image_props_weight_multiplier`` is 0, as it is by default (it then weighs
every host 0 without reading its instances)."""
GROUP_WEIGHERS = (affinity_weights.ServerGroupSoftAffinityWeigher,
                  affinity_weights.ServerGroupSoftAntiAffinityWeigher)
"""nova's soft group weighers: the group's members on a host."""


def _uniform(spec) -> bool:
    """Does ComputeCapabilitiesFilter read only what every simulated host
    shares for this flavor (no extra spec naming a HostState attribute
    that differs between hosts)?"""
    flavor = spec.flavor
    if 'extra_specs' not in flavor:
        return True
    for key in flavor.extra_specs:
        scope = key.split(':')
        if len(scope) > 1 and scope[0] != 'capabilities':
            continue
        attribute = scope[1] if len(scope) > 1 else scope[0]
        if len(scope) == 1 and attribute not in _STATE_ATTRIBUTES:
            continue     # nova ignores it: no such attribute
        if attribute not in _SHARED_ATTRIBUTES:
            return False
    return True


def _query_key(spec) -> typing.Optional[tuple]:
    """What nova's ``resources_from_request_spec`` reads of ``spec`` once
    our request filters ran: the flavor, image and hints it was made of
    (``nsp_shape``, see :func:`specs.request_spec`), the request-level
    traits and the destination's aggregates. None where it reads more (a
    requested host, node or cell, forced hosts, resources of ports) or
    the spec's shape is unknown: then nova builds the query."""
    shape = getattr(spec, 'nsp_shape', None)
    if shape is None or any(
            field in spec and getattr(spec, field) for field in (
                'requested_resources', 'force_hosts', 'force_nodes')):
        return None
    destination = spec.requested_destination \
        if 'requested_destination' in spec else None
    aggregates: tuple = ()
    forbidden: frozenset = frozenset()
    if destination is not None:
        if 'host' in destination or 'node' in destination or \
                'cell' in destination:
            return None
        aggregates = tuple(destination.aggregates or ())
        forbidden = frozenset(destination.forbidden_aggregates or ())
    return (shape, aggregates, forbidden, frozenset(spec.root_required),
            frozenset(spec.root_forbidden),
            tuple(tuple(sorted(s)) for s in spec.same_subtree),
            'is_bfv' in spec and spec.is_bfv)


_SHARED_ATTRIBUTES = scheduling.ALIKE_ATTRIBUTES - {
    'disk_mb_used', 'ram_allocation_ratio', 'cpu_allocation_ratio',
    'disk_allocation_ratio'}
"""HostState attributes with one value on every simulated host (the
disk used follows from its own usage, the allocation ratios from its
inventories)."""
_STATE_ATTRIBUTES = frozenset(dir(host_manager.HostState('h', 'n', None)))
"""What a HostState has, its class's attributes included (for unscoped
extra specs)."""


class _Nodes:
    """What nova's weighers read of every host (:class:`scheduling.Node`), as
    columns in host-name order, kept up to date as HostStates change;
    and what CPUWeigher makes of them, ``vcpus_total *
    cpu_allocation_ratio - vcpus_used`` (the same float operations, with
    each host's ratio: its VCPU inventory's)."""

    def __init__(self, nova: scheduling.NovaScheduler,
                 names: typing.List[str]) -> None:
        rows = [nova.node(name) for name in names]
        # float64 holds these whole numbers exactly, and nova's
        # normalisation turns them into floats first
        for i, field in enumerate(scheduling.Node._fields):
            setattr(self, field, np.fromiter((r[i] for r in rows),
                                             np.float64, len(rows)))
        host_of = nova.sim.host_of
        self.cpu_ratio = np.fromiter(
            (host_of[name].ratio('VCPU') for name in names), np.float64,
            len(names))
        self.vcpus_free = self.vcpus_total * self.cpu_ratio - self.vcpus_used
        # hosts with I/O in flight (a boot's own claims): IoOpsWeigher
        # weighs every host 0 without them
        self.busy = int(np.count_nonzero(self.num_io_ops))

    def update(self, at: int, node: scheduling.Node) -> None:
        self.busy -= bool(self.num_io_ops[at])
        for field, value in zip(scheduling.Node._fields, node):
            getattr(self, field)[at] = value
        self.busy += bool(node.num_io_ops)
        self.vcpus_free[at] = \
            node.vcpus_total * self.cpu_ratio[at] - node.vcpus_used


class _Inventory:
    """One resource class's inventories and usage, as columns."""

    def __init__(self, size: int) -> None:
        self.has = np.zeros(size, bool)
        self.capacity = np.zeros(size, np.int64)
        self.min_unit = np.ones(size, np.int64)
        self.max_unit = np.zeros(size, np.int64)
        self.step = np.ones(size, np.int64)
        self.free = np.zeros(size, np.int64)     # capacity - usage
        # amount -> the hosts whose inventory takes it (units and step)
        self._takes: typing.Dict[int, np.ndarray] = {}

    def use(self, at: int, used: int) -> None:
        """Host ``at`` now has ``used`` of the class allocated."""
        self.free[at] = self.capacity[at] - used

    def fits(self, amount: int, at=slice(None)) -> np.ndarray:
        """:meth:`model.Provider.fits_one` for the hosts of ``at``
        (every host by default)."""
        takes = self._takes.get(amount)
        if takes is None:
            takes = self._takes[amount] = (
                self.has & (self.min_unit <= amount)
                & (self.max_unit >= amount) & (amount % self.step == 0))
        return takes[at] & (self.free[at] >= amount)


class Boot:
    """One boot's ``GET /allocation_candidates``, as nova keeps it for the
    whole boot: a host the boot has claimed stays a candidate (weighed,
    and tried: its claim fails when it is full).

    :param hosts: the host strategy.
    :param query: the validated query.
    :param mask: the candidates, in host-name order.
    """

    def __init__(self, hosts: 'HostColumns', query: model.CandidateQuery,
                 mask: np.ndarray) -> None:
        self.hosts = hosts
        self.at = np.flatnonzero(mask)
        self.resources = dict(query.resources)
        # filter position -> the verdict of a filter every host shares
        self.uniform: typing.Dict[int, bool] = {}

    def __iter__(self) -> typing.Iterator[host_manager.HostState]:
        """Every candidate, in host-name order (for failure reports)."""
        hosts = self.hosts
        return (hosts.host_state(i) for i in self.at.tolist())


class _Candidates(collections.abc.Collection):
    """The candidates a request still considers, for the plugins that
    read them (spread's eligible domains): host names, and the domains
    of a scope holding one, read from the columns.

    :param hosts: the host strategy.
    :param at: the candidates' positions.
    """

    def __init__(self, hosts: 'HostColumns', at: np.ndarray) -> None:
        self._hosts = hosts
        self._at = at

    def __len__(self) -> int:
        return len(self._at)

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self._hosts._names(self._at))

    def __contains__(self, host: object) -> bool:
        at = self._hosts.index.get(host)
        return at is not None and at in self._at

    def domains_in(self, scope: str) -> typing.Set[str]:
        """The domains of ``scope`` holding a candidate."""
        column, ids = self._hosts._domains(scope)
        held = np.bincount(column[self._at] + 1, minlength=len(ids) + 1)
        return {ids[i] for i in np.flatnonzero(held[1:]).tolist()}


class HostColumns:
    """The host strategy of the fast engine (module docstring).

    :param sim: the simulation it serves.
    :param app: the embedded fake Placement.
    """

    def __init__(self, sim: runner.Simulation,
                 app: fake.FakePlacement) -> None:
        self.sim = sim
        self.nova = sim.nova
        self.app = app
        self.placement = app.model
        self._version = fake.parse_version(scheduling.QUERY_VERSION)
        self._dirty: typing.Set[str] = set()
        self._multipliers: typing.Dict[
            int, typing.Union[None, float, np.ndarray]] = {}
        # scope -> (the topology, each host's domain, the domains)
        self._columns: typing.Dict[str, tuple] = {}
        self._positions: typing.Dict[str, typing.Dict[str, int]] = {}
        # (the weighers, those that can add to a weight: see _weighers)
        self._plan: typing.Optional[tuple] = None
        # the last evaluation and its distinguished domains
        self._evaluation = None
        self._busy: typing.Mapping[str, typing.Any] = {}
        # what nova's query reads of a spec -> the query string -> its
        # parse; traits and aggregates -> the mask
        self._querystrings: typing.Dict[tuple, str] = {}
        self._queries: typing.Dict[str, typing.Any] = {}
        self._matched: typing.Dict[tuple, np.ndarray] = {}

    def create(self, member_of: typing.Mapping[str, typing.List[str]],
               progress: runner.Progress) -> None:
        """Create the hosts' providers in the fake's model, as
        :meth:`scheduling.EveryHost.create` does through its API, without
        a request per provider and field."""
        placement = self.placement
        # the model replaces these values, never changes them in place:
        # hosts alike share one (100,000 hosts: 130 MiB less)
        shared: typing.Dict[tuple, typing.Any] = {}
        for host in self.sim.scenario.hosts:
            for trait in host.traits:
                if not placement.known_trait(trait):
                    placement.add_trait(trait)
            provider = placement.add_provider(host.uuid, host.name)
            resources = (tuple(host.resources.items()),
                         tuple(host.reserved.items()),
                         tuple((rc, tuple(fields.items()))
                               for rc, fields in host.inventory.items()))
            inventories = shared.get(resources)
            if inventories is None:
                inventories = shared[resources] = {
                    rc: model.inventory(record)
                    for rc, record in host.inventories().items()}
            placement.set_inventories(host.uuid, provider.generation,
                                      inventories)
            traits = ('traits',) + tuple(host.traits)
            if traits not in shared:
                shared[traits] = frozenset(host.traits) | frozenset(
                    scheduling.NOVA_TRAITS)
            placement.set_traits(host.uuid, provider.generation,
                                 shared[traits])
            if member_of.get(host.name):
                aggregates = ('aggregates',) + tuple(member_of[host.name])
                if aggregates not in shared:
                    shared[aggregates] = frozenset(member_of[host.name])
                placement.set_aggregates(host.uuid, provider.generation,
                                         shared[aggregates])
            progress.advance()

    def build(self) -> None:
        """The columns of the hosts the fake Placement now holds."""
        sim = self.sim
        self.names = sorted(sim.uuid_of, key=sim.order.get)
        self.index = {name: i for i, name in enumerate(self.names)}
        size = len(self.names)
        self.providers = [self.placement.providers[sim.uuid_of[name]]
                          for name in self.names]
        # the hosts in provider-uuid order (Placement's, for ``limit``)
        self.by_uuid = np.array(sorted(range(size), key=lambda i:
                                       self.providers[i].uuid), np.int64)
        self.inventories: typing.Dict[str, _Inventory] = {}
        for i, provider in enumerate(self.providers):
            for rc, inv in provider.inventories.items():
                column = self.inventories.get(rc)
                if column is None:
                    column = self.inventories[rc] = _Inventory(size)
                column.has[i] = True
                column.capacity[i] = column.free[i] = provider.capacity(rc)
                column.min_unit[i] = inv['min_unit']
                column.max_unit[i] = inv['max_unit']
                column.step[i] = inv['step_size']
            for rc, n in self.placement.used(provider.uuid).items():
                self._inventory(rc).use(i, n)
        self._traits: typing.Dict[str, np.ndarray] = {}
        self._aggregates: typing.Dict[str, np.ndarray] = {}
        # aggregate -> its hosts' positions (a mask is made of it when a
        # query first names the aggregate)
        self._members: typing.Dict[str, typing.List[int]] = {}
        for i, provider in enumerate(self.providers):
            for aggregate in provider.aggregates:
                self._members.setdefault(aggregate, []).append(i)
        self.nodes = _Nodes(self.nova, self.names)
        # hosts alike in their aggregates' metadata share a multiplier
        keys: typing.Dict[frozenset, int] = {}
        metadata = {a.uuid: a.metadata for a in sim.scenario.aggregates}
        self._alike = np.fromiter(
            (keys.setdefault(frozenset(
                item for agg in p.aggregates
                for item in metadata.get(agg, {}).items()), len(keys))
             for p in self.providers), np.int64, size)
        self._alike_first = np.unique(self._alike, return_index=True)[1]
        self.placement.changed.clear()

    def _inventory(self, rc: str) -> _Inventory:
        column = self.inventories.get(rc)
        if column is None:
            column = self.inventories[rc] = _Inventory(len(self.names))
        return column

    def _trait(self, trait: str) -> np.ndarray:
        found = self._traits.get(trait)
        if found is None:
            found = self._traits[trait] = np.fromiter(
                (trait in p.traits for p in self.providers), bool,
                len(self.providers))
        return found

    def _aggregate(self, aggregate: str) -> np.ndarray:
        found = self._aggregates.get(aggregate)
        if found is None:
            found = self._aggregates[aggregate] = np.zeros(
                len(self.providers), bool)
            found[self._members.get(aggregate, [])] = True
        return found

    def host_state(self, at: int) -> host_manager.HostState:
        name = self.names[at]
        return self.nova.host_state(name, self.sim.uuid_of[name])

    # -- the world changes -----------------------------------------------

    def touched(self, host: str) -> None:
        """``host``'s HostState changed: its columns are read again."""
        self._dirty.add(host)

    def settle(self) -> None:
        """Read again the columns of the hosts whose HostState or
        Placement usage changed."""
        changed = self.placement.changed
        index = self.index
        if changed:
            by_uuid = self.sim.host_by_uuid
            for rp in changed:
                host = by_uuid.get(rp)
                if host is None:
                    continue
                at = index[host]
                used = self.placement.used(rp)
                for rc, column in self.inventories.items():
                    column.use(at, used.get(rc, 0))
                for rc in used.keys() - self.inventories.keys():
                    self._inventory(rc).use(at, used[rc])
                self._dirty.add(host)
            changed.clear()
        if self._dirty:
            node = self.nova.node
            for host in self._dirty:
                self.nodes.update(index[host], node(host))
            self._dirty.clear()

    def left(self) -> typing.Dict[str, typing.Dict[str, int]]:
        """Host -> resource class -> what Placement would still allocate
        there (:meth:`.world.Cloud.free` of every host), from the
        columns."""
        self.settle()
        found: typing.Dict[str, typing.Dict[str, int]] = {
            name: {} for name in self.names}
        for rc, column in self.inventories.items():
            for at in np.flatnonzero(column.has).tolist():
                found[self.names[at]][rc] = int(column.free[at])
        return found

    # -- a boot ----------------------------------------------------------

    def query(self, spec) -> Boot:
        """The boot's candidates, from the fake's query parser and its
        candidate rules applied to the columns."""
        self.nova.filter_request(spec)
        key = _query_key(spec)
        querystring = self._querystrings.get(key) if key else None
        if querystring is None:
            querystring = self.nova.query_of(spec)
            if key:
                if len(self._querystrings) >= _KEPT:
                    self._querystrings.clear()
                self._querystrings[key] = querystring
        query = self._parsed(querystring)
        self.settle()
        if query.limit is None:
            mask = self._fitting(query, slice(None))
        else:
            mask = self._first(query, max(query.limit, 0))
        self._reach(self.nova.reach(spec), mask)
        return Boot(self, query, mask)

    def _fitting(self, query: model.CandidateQuery, at) -> np.ndarray:
        """Which hosts of ``at`` Placement lists for ``query``: they
        match its traits and aggregates, and its resources fit."""
        mask = self._matching(query)[at]     # (a view of the kept one)
        for rc, amount in query.resources.items():
            column = self.inventories.get(rc)
            if column is None:
                return np.zeros_like(mask)
            mask = mask & column.fits(amount, at)
        return mask.copy() if mask.base is not None else mask

    def _first(self, query: model.CandidateQuery, limit: int
               ) -> np.ndarray:
        """The hosts Placement lists for ``query`` with a ``limit``: the
        first ``limit`` that match and fit, in provider-uuid order (the
        fake's :meth:`~.model.PlacementModel.candidates`), asked a few
        thousand hosts at a time, until there are enough."""
        mask = np.zeros(len(self.names), bool)
        order = self.by_uuid
        start, chunk, wanted = 0, max(2 * limit, 1024), limit
        while wanted > 0 and start < len(order):
            at = order[start:start + chunk]
            listed = at[self._fitting(query, at)][:wanted]
            mask[listed] = True
            wanted -= len(listed)
            start += chunk
            chunk *= 2
        return mask

    def _parsed(self, querystring: str) -> model.CandidateQuery:
        """The fake's parse of a query string; each one is parsed once
        (what it reads, the traits Placement knows, does not change
        during a simulation)."""
        found = self._queries.get(querystring)
        if found is None:
            if len(self._queries) >= _KEPT:
                self._queries.clear()
            params = webob.multidict.MultiDict(urllib.parse.parse_qsl(
                querystring, keep_blank_values=True))
            try:
                found = self.app.parse_candidate_query(params,
                                                       self._version)
            except fake.APIError as err:
                found = pc.PlacementError(err.status, 'GET',
                                          '/allocation_candidates',
                                          err.detail)
            self._queries[querystring] = found
        if isinstance(found, pc.PlacementError):
            raise found
        return found

    def _matching(self, query: model.CandidateQuery) -> np.ndarray:
        """:meth:`model.PlacementModel.matches` for every host (not to be
        changed: the hosts' traits and aggregates do not change, so each
        set of traits and aggregates is matched once)."""
        key = (query.required, query.forbidden, query.required_any,
               query.member_in, query.member_out)
        found = self._matched.get(key)
        if found is None:
            if len(self._matched) >= _KEPT:
                self._matched.clear()
            found = self._matched[key] = self._match(query)
        return found

    def _match(self, query: model.CandidateQuery) -> np.ndarray:
        mask = np.ones(len(self.names), bool)
        for trait in query.required:
            mask &= self._trait(trait)
        for trait in query.forbidden:
            mask &= ~self._trait(trait)
        for any_of in query.required_any:
            mask &= np.logical_or.reduce([self._trait(t) for t in any_of])
        for any_of in query.member_in:
            mask &= np.logical_or.reduce([self._aggregate(a)
                                          for a in any_of])
        for aggregate in query.member_out:
            mask &= ~self._aggregate(aggregate)
        return mask

    def _reach(self, reach: specs.Reach, mask: np.ndarray) -> None:
        """Leave out of ``mask`` the hosts nova's HostManager does."""
        if reach.everywhere:
            return
        index = self.index
        if reach.only is not None:
            only = index.get(reach.only)
            kept = mask[only] if only is not None else False
            mask[:] = False
            if only is not None:
                mask[only] = kept
        for host in reach.left_out:
            at = index.get(host)
            if at is not None:
                mask[at] = False

    def sorted_hosts(self, spec, boot: Boot, index: int):
        """The candidates that pass the filters, in the order nova would
        try them: heaviest first, equal weights in host-name order."""
        self.settle()
        # the request's policies for this instance, read once for every
        # filter and weigher (nova's ask the scheduler's state each)
        evaluation = state.states().evaluation(spec)
        at = self._filtered(spec, evaluation, boot, index)
        if not len(at):
            return
        weights = self._weighed(spec, evaluation, at)
        resources = boot.resources
        for _ in range(len(at)):
            best = int(np.argmax(weights))
            weights[best] = -np.inf
            host_state = self.host_state(int(at[best]))
            # what Placement's allocation request would hold
            host_state.allocation_candidates = [{'allocations': {
                host_state.uuid: {'resources': resources}}}]
            yield host_state

    # -- filters ---------------------------------------------------------

    def _filtered(self, spec, evaluation, boot: Boot, index: int
                  ) -> np.ndarray:
        """The candidates of ``boot`` that pass every filter, in
        order."""
        at = boot.at
        for position, filter_ in enumerate(self.nova.filters):
            if not len(at):
                break
            if not filter_.run_filter_for_index(index):
                continue
            if isinstance(filter_, our_filters.ScopedPolicyFilter):
                at = self._ours(filter_, evaluation, at)
                continue
            if isinstance(filter_, UNIFORM_FILTERS) or (
                    isinstance(filter_, compute_capabilities_filter
                               .ComputeCapabilitiesFilter)
                    and _uniform(spec)):
                # one verdict for every host, and for every instance of
                # the boot (what they read is the boot's)
                passes = boot.uniform.get(position)
                if passes is None:
                    passes = boot.uniform[position] = bool(
                        self.nova.filter_handler.get_filtered_objects(
                            [filter_], [self.host_state(int(at[0]))],
                            spec, index))
                if not passes:
                    at = at[:0]
                continue
            if isinstance(filter_, GROUP_FILTERS):
                if not self._nova_group(spec):
                    continue      # they pass every host
                special: typing.Optional[typing.Collection[str]] = \
                    self._group_hosts(spec)
            else:
                special = None
            own, other = self._asked(at, special)
            asked = at[own].tolist() + ([int(at[other])] if other >= 0
                                        else [])
            passed = {h.host for h in self.nova.filter_handler
                      .get_filtered_objects([filter_], [
                          self.host_state(i) for i in asked], spec, index)
                      or ()}
            keep = np.full(len(at), other >= 0 and
                           self.names[asked[-1]] in passed)
            keep[own] = [self.names[i] in passed for i in at[own].tolist()]
            at = at[keep]
        return at

    def _asked(self, at: np.ndarray,
               special: typing.Optional[typing.Collection[str]]
               ) -> typing.Tuple[np.ndarray, int]:
        """Which hosts of ``at`` to ask a filter or weigher about: the
        positions of those of ``special`` (every host when it is None),
        and of one other, which stands for all the others (-1: none
        other)."""
        if special is None:
            return np.arange(len(at)), -1
        own = np.zeros(len(at), bool)
        if special:
            index = self.index
            wanted = np.zeros(len(self.names), bool)
            wanted[[index[h] for h in special if h in index]] = True
            own = wanted[at]
        others = np.flatnonzero(~own)
        return np.flatnonzero(own), int(others[0]) if len(others) else -1

    @staticmethod
    def _nova_group(spec) -> bool:
        """Does the request's group have a Nova policy nova's group
        filters read (else they pass every host)?"""
        group = spec.instance_group
        return group is not None and group.policy in ('affinity',
                                                      'anti-affinity')

    def _group_hosts(self, spec) -> typing.Set[str]:
        """The hosts nova's group filters and weighers tell apart: those
        holding a member of the request's group, and the group's."""
        group = spec.instance_group
        if group is None:
            return set()
        where = self.sim.members.hosts
        found = set(group.hosts or ())
        found.update(where[m] for m in group.members or () if m in where)
        return found

    def _ours(self, filter_, evaluation, at: np.ndarray) -> np.ndarray:
        """Our filter: the engine's checks of its families, each over
        every host in one pass (per domain where it says it can)."""
        if evaluation is None:
            return at
        checks = evaluation.checks_for(
            filter_.families, _Candidates(self, at)
            if evaluation.reads_candidates else None)
        keep = None
        names = None
        for check in checks:
            rejected = self._rejected(check, evaluation, at)
            if rejected is None:
                if names is None:
                    names = self._names(at)
                bad = engine_context.rejected(check, names)
                if not bad:
                    continue
                rejected = np.fromiter((n in bad for n in names), bool,
                                       len(names))
            keep = ~rejected if keep is None else keep & ~rejected
        return at if keep is None else at[keep]

    def _distinguished(self, evaluation) -> typing.Mapping[
            str, typing.Optional[typing.AbstractSet[str]]]:
        """scope -> the domains some item of the request tells apart by
        more than their member counts, and those holding members (None:
        every domain by identity): the plugins' ``distinguishes``; any
        other domain of the scope gets the verdict of every other."""
        if self._evaluation is not evaluation:
            found: typing.Dict[str, typing.Optional[typing.Set[str]]] = {
                HOST: set()}
            for part in evaluation.parts:
                # of the host scope: the hosts holding members, and the
                # instance's own on a move
                ctx = part.context
                found[HOST].update(ctx.placed_hosts)
                if ctx.current_host:
                    found[HOST].add(ctx.current_host)
                for scope, domains in part.distinguished().items():
                    if domains is None or found.get(scope, ()) is None:
                        found[scope] = None
                    else:
                        found[scope] = set(found.get(scope, ())) | domains
            self._evaluation = evaluation
            self._busy = found
        return self._busy

    def _rejected(self, check, evaluation, at: np.ndarray
                  ) -> typing.Optional[np.ndarray]:
        """The hosts of ``at`` a check rejects, from its verdict per
        domain or its hosts; None when it says neither."""
        domains = getattr(check, 'domains', None)
        if domains is not None:
            scope, rejects = domains
            column, ids = self._domains(scope)
            # a scope no item says it reads: every domain asked
            busy = self._distinguished(evaluation).get(scope)
            if busy is None or len(busy) + 1 >= len(ids):
                verdict = np.fromiter(map(rejects, ids), bool, len(ids))
            else:
                # the domains without members alike: the verdict of one
                # of them, then of each domain holding members
                position = self._positions[scope]
                idle = next(d for d in ids if d not in busy)
                verdict = np.full(len(ids), rejects(idle))
                for domain in busy:
                    i = position.get(domain)
                    if i is not None:
                        verdict[i] = rejects(domain)
            # the last: hosts in no domain of the scope, or in several
            return np.append(verdict, True)[column[at]]
        hosts = getattr(check, 'hosts', None)
        if hosts is not None:
            bad, allowed = hosts
            index = self.index
            found = np.zeros(len(self.names), bool)
            found[[index[h] for h in bad if h in index]] = True
            return ~found[at] if allowed else found[at]
        return None

    def _domains(self, scope: str) -> typing.Tuple[np.ndarray, list]:
        """Each host's domain of ``scope``, as its position in the list
        of the scope's domains (-1: in none or in several), and the
        list; of the host scope, each host is its own."""
        topology = self.sim.aggregates.topology
        found = self._columns.get(scope)
        if scope == HOST:
            if found is None:
                self._positions[scope] = self.index
                found = self._columns[scope] = (
                    None, np.arange(len(self.names)), self.names)
        elif found is None or found[0] is not topology:
            index = topology.index(scope)
            ids = sorted(d.id for d in topology.domains(scope))
            position = self._positions[scope] = {
                d: i for i, d in enumerate(ids)}
            column = np.fromiter(
                (position.get(index.single.get(h), -1) if index else -1
                 for h in self.names), np.int64, len(self.names))
            found = self._columns[scope] = (topology, column, ids)
        return found[1], found[2]

    def _names(self, at: np.ndarray) -> typing.List[str]:
        names = self.names
        return [names[i] for i in at.tolist()]

    # -- weighers --------------------------------------------------------

    def _weighed(self, spec, evaluation, at: np.ndarray) -> np.ndarray:
        """Each host's weight as nova's ``get_weighed_objects`` sums it:
        each weigher's raw weights clamped to its ``minval`` and
        ``maxval`` (``BaseWeigher.weigh_objects``), normalised to [0, 1]
        (``nova.weights.normalize``), times the host's multiplier, added
        in weigher order."""
        total = np.zeros(len(at))
        if len(at) <= 1:
            return total
        for i, weigher, multiplier in self._weighers():
            raw = self._raw(weigher, spec, evaluation, at)
            if raw is None:
                continue
            low, high = weigher.minval, weigher.maxval
            if type(weigher).weigh_objects is \
                    nova_base_weights.BaseWeigher.weigh_objects:
                if low is not None and raw.min() < low:
                    raw = np.maximum(raw, low)
                if high is not None and raw.max() > high:
                    raw = np.minimum(raw, high)
            high = float(raw.max() if high is None else high)
            low = float(raw.min() if low is None else low)
            if low == high:
                continue       # nova.weights.normalize: every weight 0
            # (raw - low) / (high - low) times the multiplier, as nova
            # computes it: x - 0.0 and 1.0 * x are x, to the bit
            normalised = (raw - low if low else raw) / (high - low)
            if isinstance(multiplier, np.ndarray):
                normalised *= multiplier[at]
            elif multiplier != 1.0:
                normalised *= multiplier
            total += normalised
        return total

    def _weighers(self) -> typing.List[tuple]:
        """(position, weigher, its multiplier) of the weighers that can
        add to a weight: not those whose multiplier is 0 on every host,
        nor those that weigh every simulated host alike and clamp
        nothing (nova normalises their weights to 0)."""
        weighers = self.nova.weighers
        if self._plan is None or self._plan[0] is not weighers:
            found = []
            for i, weigher in enumerate(weighers):
                multiplier = self._multiplier(i, weigher)
                if multiplier is None or (
                        self._uniform_weigher(weigher)
                        and weigher.minval is None
                        and weigher.maxval is None):
                    continue
                found.append((i, weigher, multiplier))
            self._plan = (weighers, found)
        return self._plan[1]

    @staticmethod
    def _uniform_weigher(weigher) -> bool:
        """Does it weigh every simulated host alike?"""
        return isinstance(weigher, UNIFORM_WEIGHERS) or (
            isinstance(weigher, image_props.ImagePropertiesWeigher)
            and CONF.filter_scheduler.image_props_weight_multiplier == 0.0)

    def _raw(self, weigher, spec, evaluation, at: np.ndarray
             ) -> typing.Optional[np.ndarray]:
        """The weigher's raw weights of the hosts of ``at``; None when
        they are all alike and nothing clamps them (normalised to 0)."""
        column = COLUMN_WEIGHERS.get(type(weigher))
        if column is not None:
            return column(self.nodes, at)
        if isinstance(weigher, our_weighers.ScopedSoftPolicyWeigher):
            if evaluation is None or \
                    not evaluation.has_weights(weigher.kind):
                return None
            return self._ours_weighed(evaluation, weigher.kind, at)
        if self._uniform_weigher(weigher):
            special: typing.Optional[typing.Collection[str]] = ()
        elif isinstance(weigher, GROUP_WEIGHERS):
            group = spec.instance_group
            if group is None or group.policy != weigher.policy_name:
                return None
            special = self._group_hosts(spec)
        else:
            special = None
        own, other = self._asked(at, special)
        asked = at[own].tolist() + ([int(at[other])] if other >= 0 else [])
        found = weigher.weigh_objects(
            [nova_weights.WeighedHost(self.host_state(i), 0.0)
             for i in asked], spec)
        raw = np.full(len(at), float(found[-1]) if other >= 0 else 0.0)
        raw[own] = found[:len(own)]
        return raw

    def _ours_weighed(self, evaluation, kind: str, at: np.ndarray
                      ) -> np.ndarray:
        """Our weigher: each soft item's raw weights scaled to [0, its
        weight] over the hosts and summed (the engine's ``_weigh``), per
        domain where the item says it can: the domains without members
        weigh alike, so one of them is weighed for all."""
        total = np.zeros(len(at))
        names = None
        for _, fn, weight in evaluation.weighers(kind):
            domains = getattr(fn, 'domains', None)
            if domains is not None:
                scope, raw = domains
                column, ids = self._domains(scope)
                domains = column[at]
                held = np.bincount(domains + 1, minlength=len(ids) + 1)
                busy = self._distinguished(evaluation).get(scope)
                raw_of: typing.Dict[typing.Any, float] = {}
                if held[0]:
                    raw_of[-1] = raw(None)      # hosts in no domain
                if busy is None:
                    present = np.flatnonzero(held[1:]).tolist()
                else:
                    position = self._positions[scope]
                    present = [i for i in map(position.get, busy)
                               if i is not None and held[i + 1]]
                    if len(present) < np.count_nonzero(held[1:]):
                        idle = next(d for d in ids if d not in busy)
                        raw_of[_IDLE] = raw(idle)
                for i in present:
                    raw_of[i] = raw(ids[i])
                scaled = fn.scaled_keys(raw_of, weight)
                if scaled is None:
                    continue
                table = np.full(len(ids) + 1, scaled.pop(_IDLE, 0.0))
                for i, value in scaled.items():
                    table[i] = value
                total += table[domains]
            else:
                if names is None:
                    names = self._names(at)
                total += np.array(engine_context.scaled(fn, names, weight))
        return total

    def _multiplier(self, i: int, weigher
                    ) -> typing.Union[None, float, np.ndarray]:
        """Weigher ``i``'s multiplier of every host: one number when all
        hosts share it (None when it is 0), else a column. Asked once
        per set of aggregate metadata (what nova's weighers and ours
        read besides the options), within the scenario's options."""
        if i not in self._multipliers:
            per_key = [weigher.weight_multiplier(self.host_state(int(at)))
                       for at in self._alike_first]
            if len(set(per_key)) == 1:
                found = per_key[0] or None
            else:
                found = np.array(per_key, float)[self._alike]
            self._multipliers[i] = found
        return self._multipliers[i]

    def claim(self, uuid, host_state, project) -> bool:
        """Claim in the fake in-process; False when it does not fit."""
        (alloc,) = host_state.allocation_candidates
        return self.placement.claim(
            uuid, {rp: data['resources']
                   for rp, data in alloc['allocations'].items()},
            project, scheduling.USER)


class FastSimulation(runner.Simulation):
    """A :class:`runner.Simulation` with the :class:`HostColumns`
    strategy on the embedded fake Placement, called in-process (no
    method of the simulation is overridden).

    :param scenario: the validated scenario.
    :param app: the embedded fake Placement.
    """

    def __init__(self, scenario, app: fake.FakePlacement) -> None:
        super().__init__(scenario, embedded.InProcessClient(app),
                         hosts=lambda sim: HostColumns(sim, app))
