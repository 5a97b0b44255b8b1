"""``delete``: the server, its allocation and its group memberships go."""

from nova_scoped_policies.simulator import scenario as sc


def handle(sim, request: sc.Delete) -> int:
    sim.forget(request.server)
    return 0
