"""``update_group``: new policies in the store; the members stay."""

from nova_scoped_policies.simulator import scenario as sc


def handle(sim, request: sc.UpdateGroup) -> int:
    group = sim.scenario.groups[request.group]
    sim.store.update_group(group.uuid, sim.real(group.project,
                                                request.document),
                           check_scopes=False)
    sim.stored()
    sim.groups[request.group]['document'] = request.document
    return 0
