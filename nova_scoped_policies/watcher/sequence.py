"""The Watcher planner ``scoped_policy_sequence``: the solution's actions
in its order, one at a time.

Watcher's applier runs an action once its parents are done and runs the
others in parallel. Watcher's ``weight`` planner sorts actions by type and
runs ``parallelization`` of each type side by side; a repair plan's moves
must run in the planner's order (each fits the capacity the ones before it
left, a temporary move makes room for the next). Here each action's one
parent is the action before it: a chain, whatever watcher.conf says.

An empty action plan carries why in its status message (Watcher API 1.5):
the strategy's :attr:`summary`, e.g. why no repair exists.
"""

from watcher import objects
from watcher.common import utils
from watcher.decision_engine.planner import base

NAME = 'scoped_policy_sequence'
MESSAGE_LENGTH = 255
"""The database column of a status message."""


class SequencePlanner(base.BasePlanner):
    """Every action waits for the one before it, in the solution's order.

    The strategy that asks for it may have a ``summary`` (a string), kept
    as the status message of an empty action plan.
    """

    def schedule(self, context, audit_id, solution):
        strategy = objects.Strategy.get_by_name(context,
                                                solution.strategy.name)
        action_plan = objects.ActionPlan(
            context, uuid=utils.generate_uuid(), audit_id=audit_id,
            strategy_id=strategy.id,
            state=objects.action_plan.State.RECOMMENDED,
            global_efficacy=solution.global_efficacy)
        action_plan.create()
        parents = []
        for action in solution.actions:
            created = objects.Action(
                context, uuid=utils.generate_uuid(),
                action_plan_id=action_plan.id,
                action_type=action['action_type'],
                input_parameters=action['input_parameters'],
                state=objects.action.State.PENDING, parents=parents)
            created.create()
            parents = [created.uuid]
        for indicator in solution.efficacy_indicators:
            objects.EfficacyIndicator(
                context, uuid=utils.generate_uuid(), name=indicator.name,
                description=indicator.description, unit=indicator.unit,
                value=indicator.value,
                action_plan_id=action_plan.id).create()
        if not solution.actions:
            action_plan.state = objects.action_plan.State.SUCCEEDED
            summary = getattr(solution.strategy, 'summary', '')
            if summary:
                action_plan.status_message = summary[:MESSAGE_LENGTH]
            action_plan.save()
        return action_plan
