"""Run a scenario through the code nova-scheduler runs.

The scenario's groups live in an embedded policy store (SQLite, the policy
service's schema and data layer): their policies are saved with real domain
identifiers, ``add_member``, ``remove_member`` and ``update_group`` are the
service's operations, and the scheduler reads them back through
``[scoped_policies] store_driver = sql``, as a production nova-scheduler
does.

For every boot: our request filters edit a real nova ``RequestSpec``; nova's
own ``resources_from_request_spec`` builds the ``GET /allocation_candidates``
query, sent to Placement (the embedded fake, or a real one); the candidates
become nova ``HostState`` objects; our host filters and weighers run through
nova's filter and weight handlers (nova's normalisation); the first host
whose ``PUT /allocations`` succeeds wins, and, as in nova, its HostState
consumes the request and it is appended to the group's hosts for the next
instance of a multi-instance request. A multi-instance boot is all or
nothing, like nova's.

The filters and weighers are those of the scenario's ``[filter_scheduler]``
options (by default what the README configures: nova's defaults and ours).
Each host is a compute node as nova's HostManager sees it once the servers
before the request are built: its totals and the usage of its servers
(allocation ratios 1.0, as the inventories), its server count, no I/O in
flight, an enabled compute service that reports in, and libvirt's x86_64
guests.

The :class:`Simulation` holds that world and the scheduler's path
(:meth:`Simulation.schedule`); each kind of request is a handler of its
own (:mod:`.handlers`). A move (``migrate``, the evacuations of
``fail_host``, the moves of ``repair``: :mod:`.moves`) takes the same path
with the server's own RequestSpec, as nova's conductor sends it: the
instance, ``ignore_hosts`` or ``requested_destination``; the hosts that
failed are never candidates again (:class:`.specs.Reach`).
"""

import collections
import contextlib
import gc
import re
import secrets
import time
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
from nova_scoped_policies.engine import audit as audit_mod
from nova_scoped_policies import identifiers
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import holds
from nova_scoped_policies.scheduler import aggregate_cache
from nova_scoped_policies.scheduler import members as members_mod
from nova_scoped_policies.scheduler import plugins
from nova_scoped_policies.scheduler import request_filters
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.scheduler import stores
from nova_scoped_policies.scheduler.stores import sql as sql_store
from nova_scoped_policies.simulator import handlers
from nova_scoped_policies.simulator import plans as plans_mod
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.simulator import specs
from nova_scoped_policies.simulator import world as world_mod

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
that follows from its :class:`Node` (see :meth:`Simulation.host_state`)."""


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


class _Service(dict):
    """The compute service of a simulated host: enabled, and always heard
    from (what ComputeFilter asks of nova's servicegroup API)."""

    def get(self, key, default=None):
        if key == 'last_seen_up':
            return timeutils.utcnow()
        return super().get(key, default)


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


def _natural(name: str):
    """h2 before h10."""
    return [int(part) if part.isdigit() else part
            for part in re.split(r'(\d+)', name)]


@contextlib.contextmanager
def _spared_by_the_collector(build: typing.Callable[[], None]):
    """Python's cyclic garbage collector kept off the world: off while
    ``build`` makes it (tens of thousands of objects that all live to the
    end, which each collection would walk again for nothing), then, before
    it is back on, everything alive frozen out of its sight
    (``gc.freeze``) until the ``with`` block ends, as a long-running
    scheduler's old objects are: a full collection during the requests
    walks what they made, not the whole world again (about 0.15 s each at
    5,000 hosts). Its state is restored after; a caller's own freeze (the
    ``simulate`` command's start-up) is left alone, the world with it:
    freezing adds to what is frozen, but unfreezing does not nest."""
    enabled = gc.isenabled()
    unfreeze = not gc.get_freeze_count()
    gc.disable()
    try:
        build()
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
    try:
        yield
    finally:
        if unfreeze:
            gc.unfreeze()


class EveryHost:
    """nova's way to the hosts of a boot: every candidate of
    ``GET /allocation_candidates`` becomes a HostState, nova's filter and
    weight handlers run over all of them, and a claim is a
    ``PUT /allocations``. Works on any Placement.

    The host strategy of a :class:`Simulation` (see
    :class:`nova_scoped_policies.simulator.fast.HostColumns` for the other).

    :param sim: the simulation it serves.
    """

    def __init__(self, sim: 'Simulation') -> None:
        self.sim = sim

    def create(self, member_of: typing.Mapping[str, typing.List[str]],
               progress: 'Progress') -> None:
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
            generation = p.set_inventory(host.uuid, generation, {
                rc: {'total': n} for rc, n in host.resources.items()
            })['resource_provider_generation']
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

    def query(self, spec) -> typing.List[host_manager.HostState]:
        """The candidates of ``GET /allocation_candidates`` that nova's
        HostManager hands the filters (:meth:`Simulation.reach`)."""
        sim = self.sim
        data = sim.placement.request(
            'GET', f'/allocation_candidates?{sim.querystring(spec)}',
            version=QUERY_VERSION).json()
        reach = sim.reach(spec)
        return [h for h in sim.host_states_of(data) if reach.allows(h.host)]

    def sorted_hosts(self, spec, candidates, index):
        """The hosts that pass nova's filters, best weighed first."""
        sim = self.sim
        filtered = sim.filter_handler.get_filtered_objects(
            sim.filters, candidates, spec, index)
        if not filtered:
            return []
        weighed = sim.weight_handler.get_weighed_objects(
            sim.weighers, filtered, spec)
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


class Progress(typing.Protocol):
    """What a simulation tells of its progress (the command line draws
    it with rich)."""

    def phase(self, name: str, total: int) -> None:
        """A phase of ``total`` steps begins."""

    def advance(self, done: int = 1) -> None:
        """``done`` more steps of the phase are done."""


class _Silent:
    def phase(self, name: str, total: int) -> None:
        pass

    def advance(self, done: int = 1) -> None:
        pass


_SILENT = _Silent()


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


class _Members(members_mod.StaticMemberLocator):
    """Where the simulated servers run (``hosts``: instance uuid ->
    host, kept by the simulation as servers are built, moved and
    deleted), and the Nova members of a scenario group, as nova's API
    database lists them.

    :param sim: the simulation.
    """

    def __init__(self, sim: 'Simulation') -> None:
        super().__init__()
        self._sim = sim
        self._names = {g.uuid: name
                       for name, g in sim.scenario.groups.items()}

    def current_members(self, context, group_uuid: str) -> typing.List[str]:
        name = self._names.get(group_uuid)
        if name is None:
            return []
        record = self._sim.groups[name]
        return [self._sim.servers[s]['uuid'] for s in record['members']
                if s not in record['added'] and s in self._sim.servers]


class Simulation:
    """One scenario against one Placement.

    :param scenario: the validated scenario.
    :param placement: the Placement client (fake or real).
    :param hosts: makes the host strategy from the simulation
        (default :class:`EveryHost`): how a boot's candidates are listed,
        filtered, weighed and claimed.
    """

    USER = USER
    NOVA_TRAITS = NOVA_TRAITS

    def __init__(self, scenario: sc.Scenario,
                 placement: pc.PlacementClient,
                 hosts: typing.Callable[['Simulation'], typing.Any] =
                 EveryHost) -> None:
        self.scenario = scenario
        self.placement = placement
        self.members = _Members(self)
        self.aggregates = aggregate_cache.StaticAggregates(
            scenario.aggregates, scenario.topology())
        # members: every member, booted into the group (Nova's) or added
        # through the policy service (also in ``added``)
        self.groups = {name: {'document': g.document, 'members': [],
                              'added': set()}
                       for name, g in scenario.groups.items()}
        self.store: typing.Optional[store_api.PolicyStore] = None
        # name -> {uuid, host, group, resources, launch}
        self.servers: typing.Dict[str, dict] = {}
        self.placements: typing.List[dict] = []
        self.failures: typing.List[dict] = []
        self.moves: typing.List[dict] = []
        self.repairs: typing.List[dict] = []
        self.down: typing.Set[str] = set()   # hosts that failed
        self.uuid_of = {h.name: h.uuid for h in scenario.hosts}
        self.ctxt = nova_context.get_admin_context()
        self.filter_handler = nova_filters.HostFilterHandler()
        self.weight_handler = nova_weights.HostWeightHandler()
        self.host_states: typing.Dict[str, host_manager.HostState] = {}
        self.host_by_uuid = {h.uuid: h.name for h in scenario.hosts}
        self.resources_of = {h.name: h.resources for h in scenario.hosts}
        # the compute nodes: what the servers built on each host use, and
        # which they are (hosts without servers are absent)
        self.usage: typing.Dict[str, typing.Counter[str]] = {}
        self.instances: typing.Dict[str, typing.Dict[str, None]] = {}
        # host -> version of its compute record; a HostState made from an
        # older one is made again (see host_state)
        self._version: typing.Dict[str, int] = {}
        self._consumed: typing.List[str] = []
        self.order = {name: i for i, name in enumerate(sorted(
            (h.name for h in scenario.hosts), key=_natural))}
        self._nova_aggs: typing.Dict[str, list] = {}
        self.plans = plans_mod.Plans(self)
        self.cloud = world_mod.Cloud(self)
        self.hosts = hosts(self)

    # -- the world -------------------------------------------------------

    def build(self, progress: typing.Optional['Progress'] = None) -> None:
        """Create providers, inventories, traits and aggregates.

        :param progress: told of each host created (phase ``hosts``).
        """
        progress = progress or _SILENT
        progress.phase('hosts', len(self.scenario.hosts))
        member_of: typing.Dict[str, typing.List[str]] = {}
        for agg in self.scenario.aggregates:
            for host in agg.hosts:
                member_of.setdefault(host, []).append(agg.uuid)
            nova_agg = objects.Aggregate(id=len(self._nova_aggs) + 1,
                                         uuid=agg.uuid, name=agg.name,
                                         hosts=list(agg.hosts),
                                         metadata=dict(agg.metadata))
            for host in agg.hosts:
                self._nova_aggs.setdefault(host, []).append(nova_agg)
        self.hosts.create(member_of, progress)
        self.hosts.build()

    @contextlib.contextmanager
    def scheduler(self):
        """Our plugins as nova-scheduler would load them, with the
        scenario's options and the embedded policy store; restores
        everything afterwards."""
        saved = state.STATES
        # the simulator writes the store itself and drops the scheduler's
        # cached copy after each write (see stored)
        overrides = dict(self.scenario.config, store_driver='sql',
                         store_cache_ttl=24 * 3600)
        nova_overrides = self.scenario.nova_config
        # one SQLite database in memory, shared by the connections of this
        # process (the simulator's and the scheduler's store driver): a
        # scratch store needs no file, and its commits no disk
        url = (f'sqlite:///file:nsp-simulate-{secrets.token_hex(8)}'
               '?mode=memory&cache=shared&uri=true')
        self.store = store_api.PolicyStore(url)
        # the database lives while a connection to it is open
        anchor = self.store.engine.connect()
        migration.create_scratch(self.store.engine)
        CONF.set_override('connection', url, store_conf.STORE_GROUP)
        for key, value in overrides.items():
            CONF.set_override(key, value, 'scoped_policies')
        for key, value in nova_overrides.items():
            CONF.set_override(key, value, 'filter_scheduler')
        # the scheduler's store driver, giving holds back in this
        # simulation's Placement (nova's report client does in a cloud)
        driver = sql_store.SqlStore(CONF, release=self.release_hold)
        state.STATES = state.RequestStates(
            self.members, self.aggregates, store=stores.CachedStore(
                driver, lambda: CONF.scoped_policies.store_cache_ttl))
        try:
            self._save_groups()
            self._load_plugins()
            yield
        finally:
            for key in overrides:
                CONF.clear_override(key, 'scoped_policies')
            for key in nova_overrides:
                CONF.clear_override(key, 'filter_scheduler')
            CONF.clear_override('connection', store_conf.STORE_GROUP)
            state.STATES = saved
            driver.store.engine.dispose()
            anchor.close()
            self.store.engine.dispose()

    def _save_groups(self) -> None:
        """Every group's policies into the store, as the policy service
        saves them: with real domain identifiers."""
        for name, group in self.scenario.groups.items():
            record = self.store.create_group(
                group.uuid, group.project,
                self.real(group.project, group.document), name=name,
                check_scopes=False)
            # as a running scheduler would have: the driver loaded and the
            # group read, which answers the record the write returned
            # (later writes drop the copy: see stored)
            state.states().sources.store.remember(record)

    def real(self, project, document):
        """``document`` with the real domain ids of ``project``'s."""
        return self.aggregates.topology.to_real(document, project)

    @staticmethod
    def stored() -> None:
        """After a write: the scheduler reads the store again."""
        state.states().sources.store.forget()

    def release_hold(self, consumer: str) -> None:
        """The store driver's ``release``: give a hold back in
        Placement."""
        self.placement.request('DELETE', f'/allocations/{consumer}',
                               version=holds.HOLD_VERSION, ok=(204, 404))

    def _load_plugins(self) -> None:
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

    # -- requests --------------------------------------------------------

    def _servers(self, request: sc.Request) -> int:
        """How many servers a request boots (placed or failed)."""
        if isinstance(request, sc.Boot):
            return request.count
        if isinstance(request, sc.PlanRequest) and \
                request.kind == 'boot_plan':
            return len(self.scenario.stacks[request.stack].stack.servers)
        return 0

    def run(self, progress: typing.Optional['Progress'] = None) -> dict:
        """Build the world, run every request, return the report data.

        The garbage collector is the process's: it is off during the
        build and the world is frozen out of its sight for the rest of the
        run (:func:`_spared_by_the_collector`), so run simulations in a
        process of their own (the ``simulate`` command, a test), not in
        the threads of a long-lived service.

        :param progress: told of the hosts built (phase ``hosts``), then
            of the servers booted, placed or failed (phase ``servers``).
        """
        progress = progress or _SILENT
        start = time.perf_counter()
        with _spared_by_the_collector(lambda: self.build(progress)):
            result = self._requests(progress, start)
        kinds = {type(r) for _, r in self.scenario.requests}
        if kinds & set(sc.MOVE_KINDS):
            result['moves'] = self.moves
        if sc.Repair in kinds:
            result['repairs'] = self.repairs
        if self.scenario.stacks:
            result['plans'] = self.plans.records
        return result

    def _requests(self, progress: 'Progress', start: float) -> dict:
        """Every request in turn (each by its handler), then the report
        data."""
        progress.phase('servers', sum(
            self._servers(r) for _, r in self.scenario.requests))
        booted = 0
        with self.scheduler():
            for _, request in self.scenario.requests:
                booted += handlers.handle(self, request)
                progress.advance(self._servers(request))
            result = {'placements': self.placements,
                      'failures': self.failures, 'audit': self.audit()}
            if self.scenario.stacks:
                result['stacks'] = plans_mod.audit(self)
        result['stats'] = {'requests': len(self.scenario.requests),
                           'placed': booted,
                           'seconds': round(time.perf_counter() - start, 3)}
        return result

    # -- the scheduler's path ----------------------------------------------

    def nova_group(self, launch: specs.Launch
                   ) -> typing.Optional[specs.NovaGroup]:
        """The server group of ``launch`` as nova's conductor fills it in:
        the members booted into it (the policies, and the members added
        through the policy service, are in the store) and their hosts; the
        servers of the launch are members too."""
        if not launch.group:
            return None
        record = self.groups[launch.group]
        booted = [s for s in record['members'] if s not in record['added']]
        members = [self.servers[s]['uuid'] for s in booted]
        members += [u for u in (sc.stable_uuid('server', s)
                                for s in launch.servers)
                    if u not in members]
        hosts = [self.servers[s]['host'] for s in booted
                 if self.servers[s]['host']]
        policy, rules = nova_policy(record['document'])
        return specs.NovaGroup(self.scenario.groups[launch.group].uuid,
                               launch.group, policy, rules, members,
                               sorted(set(hosts)))

    def spec(self, launch: specs.Launch) -> objects.RequestSpec:
        """The RequestSpec of a boot of ``launch``."""
        return specs.request_spec(self.ctxt, launch, self.nova_group(launch))

    def boot(self, boot: sc.Boot) -> int:
        """One (multi-instance) boot; returns the servers placed."""
        return self.launch(specs.Launch.of_boot(boot))

    def launch(self, launch: specs.Launch) -> int:
        """Boot the servers of ``launch`` as one request through the
        scheduler, all or nothing; returns the servers placed."""
        spec = self.spec(launch)
        uuids = self._register(launch)
        found = self.schedule(spec, uuids, launch.project)
        if not found.chosen:
            self.fail_servers(launch.servers, self.rejections(
                spec, found.candidates), found.reason)
            return 0
        for server, (_, host) in zip(launch.servers, found.chosen):
            self.placed(server, host)
        return len(found.chosen)

    def refuse(self, launch: specs.Launch, reason: str) -> None:
        """The servers of ``launch`` exist but never reach the scheduler
        (a stack with no reserved plan)."""
        self._register(launch)
        self.fail_servers(launch.servers, None, reason)

    def _register(self, launch: specs.Launch) -> typing.List[str]:
        """The servers of ``launch`` exist, with no host yet (and are
        members of its group); returns their uuids."""
        uuids = [sc.stable_uuid('server', s) for s in launch.servers]
        for server, uuid in zip(launch.servers, uuids):
            self.servers[server] = {'uuid': uuid, 'host': None,
                                    'group': launch.group, 'launch': launch,
                                    'resources': dict(launch.resources)}
            if launch.group:
                self.groups[launch.group]['members'].append(server)
        return uuids

    def schedule(self, spec, uuids: typing.Sequence[str],
                 project: str) -> 'Scheduled':
        """nova's ``select_destinations`` for ``uuids``: our request
        filters and nova's query, the candidates, the filters and weighers
        for each instance in turn, the claim of the first host whose
        ``PUT /allocations`` succeeds; all or nothing.

        A chosen HostState consumes the request and is appended to the
        group's hosts for the next instance, as in nova; nova refreshes
        the HostStates it consumed once the request ends (the caller
        records the servers, which does).
        """
        chosen: typing.List[typing.Tuple[str, str]] = []
        self._consumed = []
        try:
            try:
                candidates = self.hosts.query(spec)
            except pc.PlacementError as exc:
                if not 400 <= exc.status < 500:
                    raise
                # nova's report client takes a refused query (a trait no
                # provider has...) for no candidates: NoValidHost
                return Scheduled((), 'No valid host', ())
            for uuid in uuids:
                spec.instance_uuid = uuid
                claimed = None
                for host_state in self.hosts.sorted_hosts(spec, candidates,
                                                          len(chosen)):
                    if self.hosts.claim(uuid, host_state, project):
                        claimed = host_state
                        break
                if claimed is None:
                    self._release(chosen)
                    return Scheduled((), 'No valid host', candidates)
                chosen.append((uuid, claimed.host))
                # nova's _consume_selected_host, without the lock and the
                # timestamp of consume_from_request: one thread runs here,
                # and HostStates are made again by version (host_state)
                claimed._locked_consume_from_request(spec)
                self._consumed.append(claimed.host)
                self.hosts.touched(claimed.host)
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

    def reach(self, spec) -> specs.Reach:
        """The hosts nova's HostManager hands the filters, of Placement's
        candidates (:class:`specs.Reach`): not the hosts that failed."""
        return specs.reach(spec, self.down)

    def _refresh(self, hosts: typing.Iterable[str]) -> None:
        """The HostStates of ``hosts`` are made again from their compute
        records (the servers built, or a failed request's claims
        undone)."""
        for host in hosts:
            self._version[host] = self._version.get(host, 0) + 1
            self.hosts.touched(host)

    def placed(self, server: str, host: str) -> None:
        """Record a server built on ``host`` (its allocation made)."""
        topology = self.aggregates.topology
        record = self.servers[server]
        record['host'] = host
        self._arrive(record['uuid'], host, record['resources'])
        self.placements.append({
            'server': server, 'host': host,
            'domains': {s: ','.join(topology.domain_name(d) for d in
                                    topology.domains_of(s, host))
                        for s in topology.scope_names
                        if s != 'host' and topology.domains_of(s, host)}})

    def moved(self, server: str, host: str, why: str) -> None:
        """Record a server moved to ``host`` (its allocation moved):
        ``why`` is ``migrate``, ``evacuate`` or ``repair``."""
        record = self.servers[server]
        source = record['host']
        self.usage[source].subtract(record['resources'])
        del self.instances[source][record['uuid']]
        record['host'] = host
        self._arrive(record['uuid'], host, record['resources'])
        self._refresh([source])
        self.moves.append({'server': server, 'from': source, 'to': host,
                           'why': why})

    def _arrive(self, uuid: str, host: str,
                resources: typing.Mapping[str, int]) -> None:
        """An instance now runs on ``host``: the member locator, the
        compute node and its HostState know it."""
        self.members.hosts[uuid] = host
        self.usage.setdefault(host, collections.Counter()).update(resources)
        self.instances.setdefault(host, {})[uuid] = None
        self._refresh([host])

    def forget(self, server: str) -> None:
        """A server is deleted: its allocation, its place on its host and
        in its groups go."""
        record = self.servers.pop(server)
        host = record['host']
        if host:
            self.placement.delete_allocations(record['uuid'])
            self.members.hosts.pop(record['uuid'], None)
            self.usage[host].subtract(record['resources'])
            del self.instances[host][record['uuid']]
            self._refresh([host])
        for name, group in self.groups.items():
            if server in group['members']:
                self.leave(name, server, record['uuid'])

    def leave(self, name: str, server: str, uuid: str) -> None:
        """``server`` leaves group ``name``: Nova's group, or the policy
        service's (``remove_member``) if it was added there."""
        group = self.groups[name]
        group['members'].remove(server)
        if server in group['added']:
            group['added'].discard(server)
            self.store.remove_member(self.scenario.groups[name].uuid, uuid)
            self.stored()

    def fail_servers(self, servers: typing.Iterable[str],
                     rejections: typing.Optional[dict], reason: str,
                     why: typing.Optional[str] = None) -> None:
        """Record servers that failed to boot (no host), or, with ``why``,
        to move (they stay where they are)."""
        for server in servers:
            failure = {'server': server, 'reason': reason,
                       'rejections': rejections or {}}
            if why is not None:
                failure['why'] = why
            elif server in self.servers:
                self.servers[server]['host'] = None
            self.failures.append(failure)

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
            self.ctxt, spec, _ComputeNodes(self.uuid_of))
        group = found.get_request_group(None)
        if group.in_tree:
            group.in_tree = None
            found._limit = None   # as nova does for several nodes
        return found.to_querystring()

    def _release(self, chosen) -> None:
        """Like nova: a multi-instance boot is all or nothing."""
        for uuid, _ in chosen:
            self.placement.delete_allocations(uuid)
        self._refresh(self._consumed)
        self._consumed = []

    def host_states_of(self, data) -> typing.List[host_manager.HostState]:
        """HostStates of the candidates, in host-name order.

        nova keeps Placement's order, so equal weights go to whichever host
        Placement listed first; sorting by name makes a simulation give the
        same answer on any Placement.
        """
        states = []
        for alloc in data['allocation_requests']:
            (rp,) = alloc['allocations']
            host_state = self.host_state(self.host_by_uuid[rp], rp)
            host_state.allocation_candidates = [alloc]
            states.append(host_state)
        order = self.order
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
            host_state.ram_allocation_ratio = 1.0
            host_state.cpu_allocation_ratio = 1.0
            host_state.disk_allocation_ratio = 1.0
            self.host_states[name] = host_state
        elif host_state.nsp_version == version:
            return host_state
        node = self.compute_node(name)
        for field, value in zip(Node._fields, node):
            setattr(host_state, field, value)
        host_state.disk_mb_used = \
            node.total_usable_disk_gb * 1024 - node.free_disk_mb
        host_state.instances = dict(self.instances.get(name, {}))
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
        total = self.resources_of[name]
        used = self.usage.get(name) or {}
        disk = total.get('DISK_GB', 0)
        return Node(total.get('VCPU', 0), used.get('VCPU', 0),
                    total.get('MEMORY_MB', 0),
                    total.get('MEMORY_MB', 0) - used.get('MEMORY_MB', 0),
                    disk, (disk - used.get('DISK_GB', 0)) * 1024,
                    len(self.instances.get(name) or ()), 0)

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
        for host in self.scenario.hosts:
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

    def audit(self) -> dict:
        out = {}
        topology = self.aggregates.topology
        for name, record in self.groups.items():
            placements = {s: self.servers[s]['host']
                          for s in record['members'] if s in self.servers}
            found = audit_mod.audit(identifiers.to_real(
                record['document'], topology,
                self.scenario.groups[name].project, strict=False),
                topology, placements)
            out[name] = {
                'policies': record['document'].to_dict(),
                'members': [{'server': m.member, 'host': m.host,
                             'domains': {
                                 s: (','.join(topology.domain_name(d)
                                              for d in v.split(','))
                                     if v else None)
                                 for s, v in m.domains.items()}}
                            for m in found.members],
                'violations': list(found.violations)}
        return out
