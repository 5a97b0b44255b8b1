"""``plan``: one joint decision for a whole stack, held in Placement and
recorded in the policy store, by the one stacks service
(:func:`nova_scoped_policies.stacks.service.decide_and_hold`: decide,
hold, decide again when the hold is refused, record), within a limit of
deterministic work (:func:`.plans.deadline`).

The plan's record in ``--format json``: ``status`` (``reserved``,
``infeasible``, or ``not found in time`` when the limit cut the search
short before any decision: the stack may still fit), ``assignments``,
``reason``, ``optimal`` (false when the limit or the gap stopped the
search of a decision found, or none was found), ``stopped`` (why the
search stopped: ``nothing to improve``, ``optimal``, ``gap``, ``limit``;
'' for a refusal), ``seconds`` and ``confirmed``."""

import time

from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.simulator import plans as plans_mod
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import service
from nova_scoped_policies.stacks.solver import LIMIT

RESERVED = 'reserved'
INFEASIBLE = 'infeasible'
NOT_FOUND = 'not found in time'
"""A plan's status when the limit cut its search short before any
decision: not called infeasible, the stack may still fit."""


def handle(sim, request: sc.PlanRequest) -> int:
    entry = sim.scenario.stacks[request.stack]
    plans = sim.plans
    started = time.perf_counter()
    record = {'status': INFEASIBLE, 'assignments': {}, 'reason': '',
              'optimal': False, 'stopped': '', 'confirmed': False}
    plans.decisions.pop(entry.name, None)
    try:
        outcome = service.decide_and_hold(
            plans.real(entry), plans_mod.Source(sim),
            plans_mod.Holds(sim, entry), plans_mod.Decisions(plans, entry),
            deadline=plans_mod.deadline(), gap=plans_mod.RELATIVE_GAP)
    except service.NotFoundInTime as exc:
        record.update(status=NOT_FOUND, reason=exc.reason, stopped=LIMIT)
    except service.Infeasible as exc:
        record['reason'] = exc.reason
    except (model.StackError, PolicyError) as exc:
        record['reason'] = str(exc)
    else:
        decision = outcome.decision
        record.update(status=RESERVED,
                      assignments=dict(decision.assignments),
                      optimal=decision.optimal, stopped=decision.stop)
        plans.decisions[entry.name] = outcome.record.id
    record['seconds'] = round(time.perf_counter() - started, 3)
    plans.records[entry.name] = record
    return 0
