"""Stacks in a simulation: ``plan``, ``boot_plan`` and ``confirm``.

A plan is one joint decision for a whole stack
(:func:`nova_scoped_policies.stacks.solver.decide`) over the simulated
cloud's free capacity, held in Placement with one atomic
``POST /allocations`` of hold consumers
(:mod:`nova_scoped_policies.placement.holds`), as the policy service holds
it. ``boot_plan`` boots each decided server on its host: its hold is
released and its own allocation claimed, as the ``scoped_plan`` request
filter and nova's claim do; a server whose host no longer takes it, or
whose policies it would now break, fails like any boot. ``confirm``
releases what was not booted.
"""

import time
import typing

from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import holds
from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver

TIME_LIMIT = 10.0
"""Seconds the solver may take for one plan."""


class Plans:
    """The plans of one simulation.

    :param sim: the running :class:`~.runner.Simulation`.
    """

    def __init__(self, sim) -> None:
        self.sim = sim
        self.records: typing.Dict[str, dict] = {}
        self._holds: typing.Dict[str, holds.Hold] = {}

    def handle(self, request: sc.PlanRequest) -> int:
        """Run one request; returns the servers it placed."""
        return getattr(self, request.kind)(self.sim.scenario.stacks[
            request.stack])

    # -- the world a decision reads ----------------------------------------

    def world(self) -> solver.World:
        sim = self.sim
        hosts = []
        for host in sim.scenario.hosts:
            used = sim.placement.usages(host.uuid)
            free = {rc: n - used.get(rc, 0)
                    for rc, n in host.resources.items()}
            hosts.append(solver.HostState(
                host.name, host.uuid, free,
                frozenset(host.traits) | frozenset(sim.NOVA_TRAITS)))
        servers = {r['uuid']: r['host'] for r in sim.servers.values()}
        groups = {sim.scenario.groups[name].uuid: tuple(
            sim.servers[s]['host'] for s in record['members']
            if s in sim.servers and sim.servers[s]['host'])
            for name, record in sim.groups.items()}
        return solver.World(tuple(hosts), sim.aggregates.topology, servers,
                            groups)

    # -- requests --------------------------------------------------------

    def plan(self, entry: sc.StackEntry) -> int:
        started = time.perf_counter()
        record = {'status': 'infeasible', 'assignments': {}, 'reason': '',
                  'confirmed': False}
        for attempt in range(2):   # a 409 from Placement: decide again
            world = self.world()
            try:
                stack = model.with_real_ids(entry.stack, world.topology,
                                            entry.project)
                decision = solver.decide(stack, world, TIME_LIMIT)
            except (model.StackError, PolicyError) as exc:
                record['reason'] = str(exc)
                break
            if not decision.feasible:
                record['reason'] = decision.reason
                break
            by_name = {s.name: s for s in entry.stack.servers}
            hosts = {h.name: h.uuid for h in self.sim.scenario.hosts}
            try:
                self._holds[entry.name] = holds.hold(
                    self.sim.placement,
                    {server: (hosts[host],
                              dict(by_name[server].flavor.resources))
                     for server, host in decision.assignments.items()},
                    entry.project, self.sim.USER, entry.stack.lease_seconds)
            except holds.RedecideError as exc:
                record['reason'] = str(exc)
                continue
            record.update(status='reserved', reason='',
                          assignments=dict(decision.assignments))
            break
        record['seconds'] = round(time.perf_counter() - started, 3)
        self.records[entry.name] = record
        return 0

    def boot_plan(self, entry: sc.StackEntry) -> int:
        record = self.records.get(entry.name)
        held = self._holds.get(entry.name)
        booted = 0
        stack = entry.stack
        clauses = solver.compile_stack(stack, self.world())
        for server in stack.servers:
            host = (record or {}).get('assignments', {}).get(server.name)
            if host is None or held is None:
                self.sim.fail_servers([server.name], None, 'no reserved plan '
                                      f'for stack {entry.name}')
                continue
            holds.release(self.sim.placement, held, [server.name])
            problem = self._breaks(stack, clauses, server.name, host)
            if problem is None and not self._claim(server, host,
                                                   entry.project):
                problem = f'{host} no longer has room for it'
            if problem:
                self.sim.fail_servers([server.name], None, problem)
                continue
            self.sim.placed(server.name, sc.stable_uuid('server',
                                                        server.name), host,
                            server.flavor.resources)
            booted += 1
        return booted

    def confirm(self, entry: sc.StackEntry) -> int:
        held = self._holds.pop(entry.name, None)
        if held is not None:
            holds.confirm(self.sim.placement, held, ())
            self.records[entry.name]['confirmed'] = True
        return 0

    # -- helpers ---------------------------------------------------------

    def _breaks(self, stack, clauses, name, host) -> typing.Optional[str]:
        """The host filters still check every policy: the decided host
        against the servers of the stack booted so far."""
        servers = self.sim.servers
        placed = {s.name: servers[s.name]['host'] for s in stack.servers
                  if s.name in servers and servers[s.name]['host']}
        found = solver.check_server(clauses, self.sim.aggregates.topology,
                                    placed, name, host)
        if found:
            return 'its decided host now breaks a policy: ' + '; '.join(
                found)
        return None

    def _claim(self, server: model.Server, host: str, project: str) -> bool:
        uuid = {h.name: h.uuid for h in self.sim.scenario.hosts}[host]
        try:
            self.sim.placement.put_allocations(
                sc.stable_uuid('server', server.name), {
                    'allocations': {uuid: {
                        'resources': dict(server.flavor.resources)}},
                    'project_id': project, 'user_id': self.sim.USER,
                    'consumer_generation': None})
        except pc.PlacementError as exc:
            if exc.status == 409:
                return False
            raise
        return True
