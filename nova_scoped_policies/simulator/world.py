"""The simulated cloud as a decision reads it: a stack's decision, a
repair plan, a stack's audit.

Each host that is up with what Placement would still allocate of each of
its resource classes (:func:`nova_scoped_policies.stacks.service.
free_capacity` of its inventory and usage: every server and every hold
counted), and where the existing servers and the members of the
scenario's groups run (the ends of a stack's relationships).
"""

import typing

from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.stacks import service
from nova_scoped_policies.stacks import solver


class Cloud:
    """What decisions read of one simulation.

    :param sim: the simulation.
    """

    def __init__(self, sim) -> None:
        self.sim = sim
        # host -> its inventories (the simulator made them; they never
        # change during a scenario)
        self._inventories: typing.Dict[str, dict] = {}

    def _inventory(self, host: sc.Host) -> dict:
        found = self._inventories.get(host.name)
        if found is None:
            found = self._inventories[host.name] = self.sim.placement.request(
                'GET', f'/resource_providers/{host.uuid}/inventories'
            ).json()['inventories']
        return found

    def free(self, host: sc.Host) -> typing.Dict[str, int]:
        """Resource class -> what Placement would still allocate on
        ``host``."""
        used = self.sim.placement.usages(host.uuid)
        return {rc: service.free_capacity(
            inv['total'], used.get(rc, 0), inv.get('reserved', 0),
            inv.get('allocation_ratio', 1.0))
            for rc, inv in self._inventory(host).items()}

    def traits(self, host: sc.Host) -> typing.FrozenSet[str]:
        """The host's traits in Placement (nova's own included)."""
        return frozenset(host.traits) | frozenset(self.sim.NOVA_TRAITS)

    def hosts(self) -> typing.List[sc.Host]:
        """Every host that is up, in the scenario's order."""
        return [h for h in self.sim.scenario.hosts
                if h.name not in self.sim.down]

    def servers(self) -> typing.Dict[str, str]:
        """Instance uuid -> host, of every server that runs."""
        return {r['uuid']: r['host'] for r in self.sim.servers.values()
                if r['host']}

    def groups(self) -> typing.Dict[str, typing.Tuple[str, ...]]:
        """Group uuid -> the hosts of its members (Nova's and those added
        through the policy service)."""
        sim = self.sim
        return {sim.scenario.groups[name].uuid: tuple(
            sim.servers[s]['host'] for s in record['members']
            if s in sim.servers and sim.servers[s]['host'])
            for name, record in sim.groups.items()}

    def world(self, hosts: bool = True) -> solver.World:
        """The world of a stack's decision (its hosts left out with
        ``hosts`` False: a live stack's audit and a repair's targets read
        none)."""
        found = tuple(solver.HostState(h.name, h.uuid, self.free(h),
                                       self.traits(h))
                      for h in self.hosts()) if hosts else ()
        return solver.World(found, self.sim.aggregates.topology,
                            self.servers(), self.groups())
