"""``confirm``: the stack is built; what was not booted is released, as
the policy service's ``confirm`` action does."""

from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.placement import holds
from nova_scoped_policies.simulator import scenario as sc


def handle(sim, request: sc.PlanRequest) -> int:
    decision = sim.plans.decisions.get(request.stack)
    if decision is None:
        return 0
    store = sim.plans.store()
    record = store.get(decision)
    holds.release(sim.placement, holds.Hold.of_record(record))
    store.update(record.id, status=stack_db.CONFIRMED,
                 servers=list(record.held), state=stack_db.RELEASED,
                 only_from=stack_db.HELD)
    sim.plans.records[request.stack]['confirmed'] = True
    return 0
