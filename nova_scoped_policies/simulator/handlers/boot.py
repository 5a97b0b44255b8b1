"""``boot``: one (multi-instance) boot through the scheduler."""

from nova_scoped_policies.simulator import scenario as sc


def handle(sim, request: sc.Boot) -> int:
    return sim.boot(request)
