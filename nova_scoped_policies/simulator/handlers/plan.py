"""``plan``: one joint decision for a whole stack, held in Placement and
recorded in the policy store, by the one stacks service
(:func:`nova_scoped_policies.stacks.service.decide_and_hold`: decide,
hold, decide again when the hold is refused, record)."""

import time

from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.simulator import plans as plans_mod
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import service


def handle(sim, request: sc.PlanRequest) -> int:
    entry = sim.scenario.stacks[request.stack]
    plans = sim.plans
    started = time.perf_counter()
    record = {'status': 'infeasible', 'assignments': {}, 'reason': '',
              'confirmed': False}
    plans.decisions.pop(entry.name, None)
    try:
        outcome = service.decide_and_hold(
            plans.real(entry), plans_mod.Source(sim),
            plans_mod.Holds(sim, entry), plans_mod.Decisions(plans, entry),
            plans_mod.TIME_LIMIT)
    except service.Infeasible as exc:
        record['reason'] = exc.reason
    except (model.StackError, PolicyError) as exc:
        record['reason'] = str(exc)
    else:
        record.update(status='reserved',
                      assignments=dict(outcome.decision.assignments))
        plans.decisions[entry.name] = outcome.record.id
    record['seconds'] = round(time.perf_counter() - started, 3)
    plans.records[entry.name] = record
    return 0
