"""nova-scheduler's path, driven for a simulation.

For every request: our request filters edit a real nova ``RequestSpec``;
nova's own ``resources_from_request_spec`` builds the ``GET
/allocation_candidates`` query, sent to Placement (the embedded fake, or a
real one); the candidates become nova ``HostState`` objects; the
configured filters and weighers run through nova's filter and weight
handlers (nova's normalisation); the first host whose ``PUT
/allocations`` succeeds wins, and, as in nova, its HostState consumes the
request and it is appended to the group's hosts for the next instance of
a multi-instance request. A multi-instance request is all or nothing.

:class:`NovaScheduler` is that path for one
:class:`~.runner.Simulation` (which holds the world it reads: the compute
nodes, servers and groups); a host strategy lists, filters, weighs and
claims the candidates: :class:`EveryHost` as nova does, or the fast
engine's columns (:class:`~.fast.HostColumns`). What it needs of nova's
private names is in :mod:`nova_scoped_policies.nova_seam.simulation`.
"""

import contextlib
import secrets
import typing

from oslo_config import cfg
from oslo_utils import timeutils

from nova import context as nova_context
from nova import exception
from nova import objects
from nova.scheduler import filters as nova_filters
from nova.scheduler import host_manager
from nova.scheduler import utils as nova_utils
from nova.scheduler import weights as nova_weights
from nova_scoped_policies.conf import store as store_conf
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.nova_seam import simulation
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.scheduler import plugins
from nova_scoped_policies.scheduler import request_filters
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.scheduler import stores
from nova_scoped_policies.scheduler.stores import sql as sql_store
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.simulator import specs
from nova_scoped_policies import topology as topo

CONF = cfg.CONF
objects.register_all()
QUERY_VERSION = '1.36'   # what nova's report client sends
NOVA_TRAITS = ('COMPUTE_NODE', 'OWNER_NOVA')   # nova sets both on computes
USER = specs.USER
GUESTS = [['x86_64', 'kvm', 'hvm'], ['x86_64', 'qemu', 'hvm']]
"""The guests every simulated host supports (ImagePropertiesFilter)."""
ALIKE_ATTRIBUTES = frozenset({
    'supported_instances', 'hypervisor_type', 'hypervisor_version',
    'stats', 'limits', 'ram_allocation_ratio', 'cpu_allocation_ratio',
    'disk_allocation_ratio', 'disk_mb_used', 'cpu_info', 'numa_topology',
    'pci_stats', 'metrics', 'failed_builds'})
"""HostState attributes with one value on every simulated host, or one
that follows from its :class:`Node` (see :meth:`NovaScheduler.host_state`).
"""


class Node(typing.NamedTuple):
    """What nova's weighers read of a host, by the names of the HostState
    attributes that hold it."""

    vcpus_total: int
    vcpus_used: int
    total_usable_ram_mb: int
    free_ram_mb: int
    total_usable_disk_gb: int
    free_disk_mb: int
    num_instances: int
    num_io_ops: int


class Scheduled(typing.NamedTuple):
    """What a scheduling request came to.

    :param chosen: (instance uuid, host) per instance, claimed; empty when
        it failed.
    :param reason: why it failed.
    :param candidates: the candidates it had (for the reasons of a
        failure); None when no host was tried.
    """

    chosen: typing.Tuple[typing.Tuple[str, str], ...]
    reason: str = ''
    candidates: typing.Optional[typing.Iterable[typing.Any]] = ()


class _Service(dict):
    """The compute service of a simulated host: enabled, and always heard
    from (what ComputeFilter asks of nova's servicegroup API)."""

    def get(self, key, default=None):
        if key == 'last_seen_up':
            return timeutils.utcnow()
        return super().get(key, default)


class _ComputeNode(typing.NamedTuple):
    host: str
    hypervisor_hostname: str
    uuid: str


class _ComputeNodes:
    """What nova's ``resources_from_request_spec`` asks its HostManager
    for a requested host: its compute node (one per simulated host).

    :param uuid_of: host -> its provider's uuid.
    """

    def __init__(self, uuid_of: typing.Mapping[str, str]) -> None:
        self._uuid_of = uuid_of

    def get_compute_nodes_by_host_or_node(self, ctxt, host, node,
                                          cell=None):
        name = host or node
        uuid = self._uuid_of.get(name)
        return [_ComputeNode(name, name, uuid)] if uuid else []


def nova_policy(document) -> typing.Tuple[typing.Optional[str], dict]:
    """The policy and rules of the Nova group a scenario group stands for.

    Its host-scope policy (``soft-anti-affinity:host`` ->
    ``soft-anti-affinity``), as a tenant picks the Nova policy that matches
    what it wants at host level; None where the document has none.
    """
    for found in document.policies:
        if found.scope == 'host' and found.identifier is None \
                and registry.plugin_of(found.type).nova_policy:
            rules = {}
            most = document.rules.max_server_per.get('host')
            if found.type.value == 'anti-affinity' and most is not None:
                rules['max_server_per_host'] = most
            return found.type.value, rules
    return None, {}


class EveryHost:
    """nova's way to the hosts of a request: every candidate of
    ``GET /allocation_candidates`` becomes a HostState, nova's filter and
    weight handlers run over all of them, and a claim is a
    ``PUT /allocations``. Works on any Placement.

    The host strategy of a :class:`~.runner.Simulation` (see
    :class:`nova_scoped_policies.simulator.fast.HostColumns` for the
    other).

    :param sim: the simulation it serves.
    """

    def __init__(self, sim) -> None:
        self.sim = sim

    def create(self, member_of: typing.Mapping[str, typing.List[str]],
               progress) -> None:
        """Create the hosts' providers through Placement's API: their
        inventories, traits (nova's own included) and aggregates.

        :param member_of: host -> the uuids of its aggregates.
        :param progress: told of each host created.
        """
        p = self.sim.placement
        hosts = self.sim.scenario.hosts
        for trait in sorted({t for h in hosts for t in h.traits
                             if t.startswith('CUSTOM_')}):
            p.create_trait(trait)
        for host in hosts:
            generation = p.create_provider(host.name, host.uuid)['generation']
            generation = p.set_inventory(
                host.uuid, generation, host.inventories()
            )['resource_provider_generation']
            generation = p.set_traits(
                host.uuid, generation, set(host.traits) | set(NOVA_TRAITS)
            )['resource_provider_generation']
            if member_of.get(host.name):
                p.set_aggregates(host.uuid, generation, member_of[host.name])
            progress.advance()

    def build(self) -> None:
        """The providers exist: nothing more to prepare."""

    def touched(self, host: str) -> None:
        """``host``'s HostState changed: nothing to do."""

    def left(self) -> typing.Dict[str, typing.Dict[str, int]]:
        """Host -> resource class -> what Placement would still allocate
        there."""
        cloud = self.sim.cloud
        return {h.name: cloud.free(h) for h in self.sim.scenario.hosts}

    def query(self, spec) -> typing.List[host_manager.HostState]:
        """The candidates of ``GET /allocation_candidates`` that nova's
        HostManager hands the filters (:meth:`NovaScheduler.reach`)."""
        nova = self.sim.nova
        data = self.sim.placement.request(
            'GET', f'/allocation_candidates?{nova.querystring(spec)}',
            version=QUERY_VERSION).json()
        reach = nova.reach(spec)
        return [h for h in nova.host_states_of(data) if reach.allows(h.host)]

    def sorted_hosts(self, spec, candidates, index):
        """The hosts that pass nova's filters, best weighed first."""
        nova = self.sim.nova
        filtered = nova.filter_handler.get_filtered_objects(
            nova.filters, candidates, spec, index)
        if not filtered:
            return []
        weighed = nova.weight_handler.get_weighed_objects(
            nova.weighers, filtered, spec)
        return [w.obj for w in weighed]

    def claim(self, uuid, host_state, project) -> bool:
        """Claim the host's allocation request; False on a conflict."""
        alloc = host_state.allocation_candidates[0]
        try:
            self.sim.placement.put_allocations(uuid, {
                'allocations': alloc['allocations'],
                'project_id': project, 'user_id': USER,
                'consumer_generation': None}, )
        except pc.PlacementError as exc:
            if exc.status == 409:
                return False
            raise
        return True


class NovaScheduler:
    """nova-scheduler for one simulation: its plugins, its HostStates and
    ``select_destinations``.

    :param sim: the simulation whose world it reads.
    """

    def __init__(self, sim) -> None:
        self.sim = sim
        self.ctxt = nova_context.get_admin_context()
        self.filter_handler = nova_filters.HostFilterHandler()
        self.weight_handler = nova_weights.HostWeightHandler()
        self.request_filters: typing.List[typing.Any] = []
        self.filters: typing.List[typing.Any] = []
        self.weighers: typing.List[typing.Any] = []
        self.host_states: typing.Dict[str, host_manager.HostState] = {}
        # host -> version of its compute record; a HostState made from an
        # older one is made again (see host_state)
        self._version: typing.Dict[str, int] = {}
        self._consumed: typing.List[str] = []
        # host -> nova's Aggregate objects of the host (with metadata)
        self._nova_aggs: typing.Dict[str, list] = {}

    def aggregates(self, aggregates: typing.Iterable[topo.AggregateInfo]
                   ) -> None:
        """The aggregates as nova's HostManager keeps them, per host."""
        for agg in aggregates:
            nova_agg = objects.Aggregate(id=len(self._nova_aggs) + 1,
                                         uuid=agg.uuid, name=agg.name,
                                         hosts=list(agg.hosts),
                                         metadata=dict(agg.metadata))
            for host in agg.hosts:
                self._nova_aggs.setdefault(host, []).append(nova_agg)

    @contextlib.contextmanager
    def running(self):
        """The scheduler's process: the scenario's options, our plugins'
        state over the simulation's members, aggregates and an embedded
        policy store (``sim.store``, which the simulation writes as the
        policy service does); restored afterwards."""
        sim = self.sim
        # the simulator writes the store itself and drops the scheduler's
        # cached copy after each write (Simulation.stored)
        overrides = dict(sim.scenario.config, store_driver='sql',
                         store_cache_ttl=24 * 3600)
        # one SQLite database in memory, shared by the connections of this
        # process (the simulator's and the scheduler's store driver): a
        # scratch store needs no file, and its commits no disk
        url = (f'sqlite:///file:nsp-simulate-{secrets.token_hex(8)}'
               '?mode=memory&cache=shared&uri=true')
        sim.store = store_api.PolicyStore(url)
        # the database lives while a connection to it is open
        anchor = sim.store.engine.connect()
        migration.create_scratch(sim.store.engine)
        try:
            with simulation.overrides(CONF, {
                    store_conf.STORE_GROUP: {'connection': url},
                    'scoped_policies': overrides,
                    'filter_scheduler': sim.scenario.nova_config}):
                # the scheduler's store driver, giving holds back in this
                # simulation's Placement (nova's report client does in a
                # cloud)
                driver = sql_store.SqlStore(CONF,
                                            release=sim.release_hold)
                try:
                    with simulation.scheduler_states(state.RequestStates(
                            sim.members, sim.aggregates,
                            store=stores.CachedStore(
                                driver, lambda: CONF.scoped_policies
                                .store_cache_ttl))):
                        yield
                finally:
                    driver.store.engine.dispose()
        finally:
            anchor.close()
            sim.store.engine.dispose()

    def load_plugins(self) -> None:
        """What nova's HostManager loads from ``[filter_scheduler]``."""
        # nova's own request filters need nova's databases (service
        # versions, cells): only ours run, each checking its option.
        self.request_filters = [
            cls() for cls in plugins.load_classes(request_filters.NAMESPACE)]
        options = CONF.filter_scheduler
        available = {cls.__name__: cls for cls in
                     self.filter_handler.get_matching_classes(
                         options.available_filters)}
        self.filters = [available[name]()
                        for name in options.enabled_filters]
        self.weighers = [cls() for cls in
                         self.weight_handler.get_matching_classes(
                             options.weight_classes)]

    # -- the request -----------------------------------------------------

    def nova_group(self, launch: specs.Launch
                   ) -> typing.Optional[specs.NovaGroup]:
        """The server group of ``launch`` as nova's conductor fills it in:
        the members booted into it (the policies, and the members added
        through the policy service, are in the store) and their hosts; the
        servers of the launch are members too."""
        if not launch.group:
            return None
        sim = self.sim
        record = sim.groups[launch.group]
        booted = [s for s in record['members'] if s not in record['added']]
        members = [sim.servers[s]['uuid'] for s in booted]
        members += [u for u in (sc.stable_uuid('server', s)
                                for s in launch.servers)
                    if u not in members]
        hosts = [sim.servers[s]['host'] for s in booted
                 if sim.servers[s]['host']]
        policy, rules = nova_policy(record['document'])
        return specs.NovaGroup(sim.scenario.groups[launch.group].uuid,
                               launch.group, policy, rules, members,
                               sorted(set(hosts)))

    def spec(self, launch: specs.Launch) -> objects.RequestSpec:
        """The RequestSpec of a boot of ``launch``."""
        return specs.request_spec(self.ctxt, launch, self.nova_group(launch))

    def querystring(self, spec) -> str:
        """Our request filters edit the spec; nova builds the query.

        A requested host (a move to a named host, a server of a stack
        decision) is ``in_tree`` in nova's query, which the embedded
        Placement does not serve: the query goes without it, and without
        a limit (in_tree leaves one candidate), and the host is kept
        alone as the candidates are read (:meth:`reach`), which is what
        ``in_tree`` does for a compute node with no nested providers.
        """
        self.filter_request(spec)
        return self.query_of(spec)

    def filter_request(self, spec) -> None:
        """Our request filters edit the spec, as they do in
        nova-scheduler."""
        for request_filter in self.request_filters:
            request_filter(self.ctxt, spec)

    def query_of(self, spec) -> str:
        """nova's ``GET /allocation_candidates`` query of ``spec`` (see
        :meth:`querystring`)."""
        found = nova_utils.resources_from_request_spec(
            self.ctxt, spec, _ComputeNodes(self.sim.uuid_of))
        group = found.get_request_group(None)
        if group.in_tree:
            group.in_tree = None
            simulation.unlimited(found)
        return found.to_querystring()

    def reach(self, spec) -> specs.Reach:
        """The hosts nova's HostManager hands the filters, of Placement's
        candidates (:class:`specs.Reach`): not the hosts that failed."""
        return specs.reach(spec, self.sim.down)

    def schedule(self, spec, uuids: typing.Sequence[str],
                 project: str) -> Scheduled:
        """nova's ``select_destinations`` for ``uuids``: our request
        filters and nova's query, the candidates, the filters and weighers
        for each instance in turn, the claim of the first host whose
        ``PUT /allocations`` succeeds; all or nothing.

        A chosen HostState consumes the request and is appended to the
        group's hosts for the next instance, as in nova; nova refreshes
        the HostStates it consumed once the request ends (the caller
        records the servers, which does).
        """
        hosts = self.sim.hosts
        chosen: typing.List[typing.Tuple[str, str]] = []
        self._consumed = []
        try:
            try:
                candidates = hosts.query(spec)
            except pc.PlacementError as exc:
                if not 400 <= exc.status < 500:
                    raise
                # nova's report client takes a refused query (a trait no
                # provider has...) for no candidates: NoValidHost
                return Scheduled((), 'No valid host', ())
            for uuid in uuids:
                spec.instance_uuid = uuid
                claimed = None
                for host_state in hosts.sorted_hosts(spec, candidates,
                                                     len(chosen)):
                    if hosts.claim(uuid, host_state, project):
                        claimed = host_state
                        break
                if claimed is None:
                    self._release(chosen)
                    return Scheduled((), 'No valid host', candidates)
                chosen.append((uuid, claimed.host))
                simulation.consume(claimed, spec)
                self._consumed.append(claimed.host)
                hosts.touched(claimed.host)
                if spec.instance_group is not None:
                    spec.instance_group.hosts.append(claimed.host)
        except exception.RequestFilterFailed as exc:
            # nova's scheduler manager: a request filter's refusal
            self._release(chosen)
            return Scheduled((), str(exception.NoValidHost(
                reason=exc.message)), None)
        except exception.NoValidHost as exc:
            # the policies refused the request itself (as nova-scheduler
            # would): there are no per-host reasons
            self._release(chosen)
            return Scheduled((), str(exc), None)
        return Scheduled(tuple(chosen))

    def _release(self, chosen) -> None:
        """Like nova: a multi-instance request is all or nothing."""
        for uuid, _ in chosen:
            self.sim.placement.delete_allocations(uuid)
        self.refresh(self._consumed)
        self._consumed = []

    def rejections(self, spec, candidates) -> typing.Dict[str, typing.List[
            str]]:
        """Why each host was not chosen for a request that found none:
        left out by nova's HostManager (:meth:`reach`), the policies'
        reasons, else not a candidate of Placement; nothing when no host
        was tried (``candidates`` None: the request itself was refused).
        """
        if candidates is None:
            return {}
        try:
            evaluation = state.states().evaluation(spec)
        except exception.NoValidHost:
            evaluation = None
        reach = self.reach(spec)
        names = {h.host for h in candidates}
        rejections: typing.Dict[str, typing.List[str]] = {}
        for host in self.sim.scenario.hosts:
            left_out = reach.why(host.name)
            if left_out:
                rejections[host.name] = [left_out]
                continue
            found = [str(r) for r in evaluation.reasons(host.name)] \
                if evaluation is not None else []
            if not found and host.name not in names:
                found = ['placement: not a candidate (capacity or traits)']
            rejections[host.name] = found or [
                'passed the filters; its claim or a later instance of the '
                'request failed']
        return rejections

    # -- the HostStates --------------------------------------------------

    def refresh(self, hosts: typing.Iterable[str]) -> None:
        """The HostStates of ``hosts`` are made again from their compute
        records (the servers built, or a failed request's claims
        undone)."""
        touched = self.sim.hosts.touched
        for host in hosts:
            self._version[host] = self._version.get(host, 0) + 1
            touched(host)

    def host_states_of(self, data) -> typing.List[host_manager.HostState]:
        """HostStates of the candidates, in host-name order.

        nova keeps Placement's order, so equal weights go to whichever host
        Placement listed first; sorting by name makes a simulation give the
        same answer on any Placement.
        """
        states = []
        by_uuid = self.sim.host_by_uuid
        for alloc in data['allocation_requests']:
            (rp,) = alloc['allocations']
            host_state = self.host_state(by_uuid[rp], rp)
            host_state.allocation_candidates = [alloc]
            states.append(host_state)
        order = self.sim.order
        return sorted(states, key=lambda h: order[h.host])

    def host_state(self, name: str, uuid: str) -> host_manager.HostState:
        """The host's HostState as nova's HostManager keeps it: made from
        the compute node (:meth:`compute_node`), its aggregates (with
        metadata) and its service; consumed by the requests that chose
        it until the compute node changes."""
        host_state = self.host_states.get(name)
        version = self._version.get(name, 0)
        if host_state is None:
            host_state = host_manager.HostState(name, name, None)
            host_state.uuid = uuid
            host_state.aggregates = self._nova_aggs.get(name, [])
            host_state.service = _Service(disabled=False, forced_down=False,
                                          host=name, binary='nova-compute')
            host_state.supported_instances = GUESTS
            host_state.hypervisor_type = 'QEMU'
            host_state.hypervisor_version = 8002000
            host_state.hypervisor_hostname = name
            host_state.stats = {}
            host_state.limits = {}
            # the compute node's ratios, which its inventories carry
            host = self.sim.host_of[name]
            host_state.ram_allocation_ratio = host.ratio('MEMORY_MB')
            host_state.cpu_allocation_ratio = host.ratio('VCPU')
            host_state.disk_allocation_ratio = host.ratio('DISK_GB')
            self.host_states[name] = host_state
        elif host_state.nsp_version == version:
            return host_state
        node = self.compute_node(name)
        for field, value in zip(Node._fields, node):
            setattr(host_state, field, value)
        host_state.disk_mb_used = \
            node.total_usable_disk_gb * 1024 - node.free_disk_mb
        host_state.instances = dict(self.sim.instances.get(name, {}))
        host_state.nsp_version = version
        return host_state

    def node(self, name: str) -> Node:
        """What nova's weighers read of the host now: its HostState where
        a request consumed it, else its compute node."""
        host_state = self.host_states.get(name)
        if host_state is None or \
                host_state.nsp_version != self._version.get(name, 0):
            return self.compute_node(name)
        return Node(*(getattr(host_state, f) for f in Node._fields))

    def compute_node(self, name: str) -> Node:
        """What nova's weighers read of a host's compute node once its
        servers are built (no I/O in flight: the builds are done)."""
        sim = self.sim
        total = sim.resources_of[name]
        used = sim.usage.get(name) or {}
        disk = total.get('DISK_GB', 0)
        return Node(total.get('VCPU', 0), used.get('VCPU', 0),
                    total.get('MEMORY_MB', 0),
                    total.get('MEMORY_MB', 0) - used.get('MEMORY_MB', 0),
                    disk, (disk - used.get('DISK_GB', 0)) * 1024,
                    len(sim.instances.get(name) or ()), 0)
