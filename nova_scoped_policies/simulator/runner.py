"""Run a scenario through the code nova-scheduler runs.

The scenario's groups live in an embedded policy store (SQLite, the policy
service's schema and data layer): their policies are saved with real domain
identifiers, ``add_member``, ``remove_member`` and ``update_group`` are the
service's operations, and the scheduler reads them back through
``[scoped_policies] store_driver = sql``, as a production nova-scheduler
does.

The filters and weighers are those of the scenario's ``[filter_scheduler]``
options (by default what the README configures: nova's defaults and ours).
Each host is a compute node as nova's HostManager sees it once the servers
before the request are built: its totals and the usage of its servers
(its allocation ratios those of its inventories), its server count, no
I/O in flight, an enabled compute service that reports in, and libvirt's
x86_64 guests.

The :class:`Simulation` holds that world (hosts, compute nodes, servers,
groups, the policy store, placements, failures) and the changes requests
make to it; :class:`~.scheduling.NovaScheduler` is nova-scheduler's path
through it, which every request, a boot or a move, takes; each kind of
request is a handler of its own (:mod:`.handlers`). A move (``migrate``,
the evacuations of ``fail_host``, the moves of ``repair``: :mod:`.moves`)
takes the same path with the server's own RequestSpec, as nova's
conductor sends it: the instance, ``ignore_hosts`` or
``requested_destination``; the hosts that failed are never candidates
again (:class:`.specs.Reach`).
"""

import collections
import contextlib
import gc
import re
import time
import typing
import uuid as uuid_mod

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.engine import audit as audit_mod
from nova_scoped_policies import identifiers
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import holds
from nova_scoped_policies.scheduler import aggregate_cache
from nova_scoped_policies.scheduler import members as members_mod
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.simulator import handlers
from nova_scoped_policies.simulator import plans as plans_mod
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.simulator import scheduling
from nova_scoped_policies.simulator import specs
from nova_scoped_policies.simulator import world as world_mod


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


def hold_consumer(index: int, held: sc.Held) -> str:
    """The consumer uuid of the ``index``-th hold of a scenario: stable,
    with the prefix of every hold consumer (:data:`.placement.holds.
    CONSUMER_PREFIX`)."""
    found = sc.stable_uuid('hold', f'{index}:{held.stack}:{held.server}')
    return str(uuid_mod.UUID(holds.CONSUMER_PREFIX
                             + found.replace('-', '')[8:]))


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
    """One scenario against one Placement: the world, and the changes
    requests make to it.

    :param scenario: the validated scenario.
    :param placement: the Placement client (fake or real).
    :param hosts: makes the host strategy from the simulation (default
        :class:`~.scheduling.EveryHost`): how a request's candidates are
        listed, filtered, weighed and claimed.
    """

    USER = scheduling.USER
    NOVA_TRAITS = scheduling.NOVA_TRAITS

    def __init__(self, scenario: sc.Scenario,
                 placement: pc.PlacementClient,
                 hosts: typing.Callable[['Simulation'], typing.Any] =
                 scheduling.EveryHost) -> None:
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
        self.resilience: typing.List[dict] = []
        # where resilience sweeps run (the command line's --workers or
        # --scheduler): None, as :mod:`.sweep` decides by default
        self.sweep = None
        # what the run tells of its progress (resilience sweeps count
        # their cases there)
        self.progress: 'Progress' = _SILENT
        self.down: typing.Set[str] = set()   # hosts that failed
        # fail_host: each host that failed, what left it, what stayed
        self.failed_hosts: typing.List[dict] = []
        self.deleted: typing.Dict[str, typing.Optional[str]] = {}
        self.uuid_of = {h.name: h.uuid for h in scenario.hosts}
        self.host_by_uuid = {h.uuid: h.name for h in scenario.hosts}
        self.resources_of = {h.name: h.resources for h in scenario.hosts}
        self.host_of = {h.name: h for h in scenario.hosts}
        # the compute nodes: what the servers built on each host use, and
        # which they are (hosts without servers are absent)
        self.usage: typing.Dict[str, typing.Counter[str]] = {}
        self.instances: typing.Dict[str, typing.Dict[str, None]] = {}
        self.order = {name: i for i, name in enumerate(sorted(
            (h.name for h in scenario.hosts), key=_natural))}
        self.plans = plans_mod.Plans(self)
        self.cloud = world_mod.Cloud(self)
        self.nova = scheduling.NovaScheduler(self)
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
        self.nova.aggregates(self.scenario.aggregates)
        self.hosts.create(member_of, progress)
        self._running()
        self.hosts.build()

    def _running(self) -> None:
        """What runs before the first request: each host's reserved
        amounts, which its compute node counts as used (as nova's resource
        tracker does), and the scenario's ``servers:``, each with its
        allocation on its host, a member of its group (Nova's), where they
        are whatever the policies say."""
        for host in self.scenario.hosts:
            if host.reserved:
                self.usage[host.name] = collections.Counter(host.reserved)
        for server in self.scenario.servers:
            launch = specs.Launch(server.name, (server.name,), server.group,
                                  server.project, dict(server.resources))
            (uuid,) = self.register(launch)
            self.placement.put_allocations(uuid, {
                'allocations': {self.uuid_of[server.host]: {
                    'resources': dict(server.resources)}},
                'project_id': server.project, 'user_id': self.USER,
                'consumer_generation': None})
            self.servers[server.name]['host'] = server.host
            self._arrive(uuid, server.host, server.resources)
        self._hold()

    def _hold(self) -> None:
        """The scenario's ``holds:`` in Placement, in one atomic write as
        the policy service holds a decision (:func:`.placement.holds.
        write`): allocations of hold consumers, which Placement counts
        and nova's compute nodes do not (no instance runs)."""
        if not self.scenario.holds:
            return
        body = {}
        for i, held in enumerate(self.scenario.holds):
            body[hold_consumer(i, held)] = {
                'allocations': {self.uuid_of[held.host]: {
                    'resources': dict(held.resources)}},
                'project_id': held.project, 'user_id': self.USER,
                'consumer_generation': None,
                'consumer_type': holds.CONSUMER_TYPE}
        self.placement.request('POST', '/allocations', body,
                               version=holds.HOLD_VERSION)

    @contextlib.contextmanager
    def scheduler(self):
        """nova-scheduler with our plugins as it would load them, the
        scenario's options and the embedded policy store (``store``,
        holding every group); restores everything afterwards."""
        with self.nova.running():
            self._save_groups()
            self.nova.load_plugins()
            yield

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

    # -- the requests -----------------------------------------------------

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
        progress = self.progress = progress or _SILENT
        start = time.perf_counter()
        with _spared_by_the_collector(lambda: self.build(progress)):
            result = self._requests(progress, start)
        kinds = {type(r) for _, r in self.scenario.requests}
        if kinds & set(sc.MOVE_KINDS):
            result['moves'] = self.moves
        if sc.Repair in kinds:
            result['repairs'] = self.repairs
        if sc.Resilience in kinds:
            result['resilience'] = self.resilience
        if self.scenario.stacks:
            result['plans'] = self.plans.records
        return result

    def _requests(self, progress: 'Progress', start: float) -> dict:
        """Every request in turn (each by its handler), then the report
        data."""
        progress.phase('servers', sum(
            handlers.servers(self, r) for _, r in self.scenario.requests))
        booted = 0
        with self.scheduler():
            for _, request in self.scenario.requests:
                booted += handlers.handle(self, request)
                progress.advance(handlers.servers(self, request))
            result = {'placements': self.placements,
                      'failures': self.failures, 'audit': self.audit()}
            if self.scenario.stacks:
                result['stacks'] = plans_mod.audit(self)
        result['final'] = {name: record['host']
                           for name, record in self.servers.items()}
        result['servers'] = self.stories()
        if self.failed_hosts:
            result['failed_hosts'] = self.failed_hosts
        refused = sum('why' in f for f in self.failures)
        result['stats'] = {
            'requests': len(self.scenario.requests), 'placed': booted,
            'failed_boots': len(self.failures) - refused,
            'refused_moves': refused, 'moved': len(self.moves),
            'repaired': sum(r['status'] == 'repaired'
                            for r in self.repairs),
            'seconds': round(time.perf_counter() - start, 3)}
        return result

    def stories(self) -> typing.List[dict]:
        """Each server's life, in the order it came (running before the
        first request, then as booted): where it is at the end (None: no
        host), that host's domains, where it was booted or ran first,
        its moves, whether it was deleted."""
        first: typing.Dict[str, typing.Optional[str]] = {
            s.name: s.host for s in self.scenario.servers}
        for placement in self.placements:
            first.setdefault(placement['server'], placement['host'])
        for failure in self.failures:
            if 'why' not in failure:
                first.setdefault(failure['server'], None)
        moved: typing.Dict[str, typing.List[dict]] = {}
        for move in self.moves:
            moved.setdefault(move['server'], []).append(
                {'to': move['to'], 'why': move['why']})
        running = {s.name for s in self.scenario.servers}
        stories = []
        for name, host in first.items():
            deleted = name in self.deleted
            now = (self.deleted[name] if deleted
                   else self.servers.get(name, {}).get('host'))
            stories.append({
                'server': name, 'host': None if deleted else now,
                'domains': self.domains_of(now) if now and not deleted
                else {},
                'first': host, 'running': name in running,
                'moves': moved.get(name, []), 'deleted': deleted})
        return stories

    @contextlib.contextmanager
    def before(self, index: int):
        """The world as the scenario's requests before request ``index``
        leave it (built, those requests run), inside the scheduler, for
        the ``with`` block: where a worker runs the cases of a resilience
        sweep (:mod:`.sweep`). Resilience requests among them are left
        out: they change nothing."""
        with _spared_by_the_collector(self.build), self.scheduler():
            for _, request in self.scenario.requests[:index]:
                if not isinstance(request, sc.Resilience):
                    handlers.handle(self, request)
            yield self

    def boot(self, boot: sc.Boot) -> int:
        """One (multi-instance) boot, by its handler; returns the servers
        placed."""
        return handlers.handle(self, boot)

    # -- the world changes ----------------------------------------------

    def register(self, launch: specs.Launch) -> typing.List[str]:
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

    def placed(self, server: str, host: str) -> None:
        """Record a server built on ``host`` (its allocation made)."""
        record = self.servers[server]
        record['host'] = host
        self._arrive(record['uuid'], host, record['resources'])
        self.placements.append({'server': server, 'host': host,
                                'domains': self.domains_of(host)})

    def domains_of(self, host: str) -> typing.Dict[str, str]:
        """Scope -> the names of the domains that hold ``host`` (joined
        with ``,``), for the deployer scopes that have one."""
        topology = self.aggregates.topology
        return {s: ','.join(topology.domain_name(d) for d in
                            topology.domains_of(s, host))
                for s in topology.scope_names
                if s != 'host' and topology.domains_of(s, host)}

    def moved(self, server: str, host: str, why: str) -> None:
        """Record a server moved to ``host`` (its allocation moved):
        ``why`` is ``migrate``, ``evacuate`` or ``repair``."""
        source = self.servers[server]['host']
        self.relocate(server, host)
        self.moves.append({'server': server, 'from': source, 'to': host,
                           'why': why})

    def relocate(self, server: str, host: str) -> None:
        """The compute nodes, HostStates and member locator know that
        ``server`` (its allocation already moved) now runs on ``host``."""
        record = self.servers[server]
        source = record['host']
        self.usage[source].subtract(record['resources'])
        del self.instances[source][record['uuid']]
        record['host'] = host
        self._arrive(record['uuid'], host, record['resources'])
        self.nova.refresh([source])

    def _arrive(self, uuid: str, host: str,
                resources: typing.Mapping[str, int]) -> None:
        """An instance now runs on ``host``: the member locator, the
        compute node and its HostState know it."""
        self.members.hosts[uuid] = host
        self.usage.setdefault(host, collections.Counter()).update(resources)
        self.instances.setdefault(host, {})[uuid] = None
        self.nova.refresh([host])

    def forget(self, server: str) -> None:
        """A server is deleted: its allocation, its place on its host and
        in its groups go."""
        record = self.servers.pop(server)
        host = record['host']
        self.deleted[server] = host
        if host:
            self.placement.delete_allocations(record['uuid'])
            self.members.hosts.pop(record['uuid'], None)
            self.usage[host].subtract(record['resources'])
            del self.instances[host][record['uuid']]
            self.nova.refresh([host])
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
