"""``resilience``: what if domains fail; each case run by
:func:`.resilience.run_case`, here or on worker processes
(:mod:`.sweep`), the report by :func:`.resilience.summary`. Nothing in the
world changes."""

import time

from nova_scoped_policies.simulator import resilience
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.simulator import sweep


def handle(sim, request: sc.Resilience) -> int:
    start = time.perf_counter()
    index = next(i for i, (_, r) in enumerate(sim.scenario.requests)
                 if r is request)
    failing = resilience.domains(sim.scenario, sim.aggregates.topology,
                                 request.fail)
    cases = resilience.cases(list(failing), request.count, request.cases,
                             request.seed)
    outcomes = sweep.run(sim, index, cases)
    sim.resilience.append(resilience.summary(
        request, outcomes, time.perf_counter() - start))
    return 0
