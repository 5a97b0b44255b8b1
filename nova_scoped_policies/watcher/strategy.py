"""The Watcher strategy ``scoped_policy_repair``."""

import typing

from oslo_config import cfg
from oslo_log import log as logging
from watcher.decision_engine.strategy.strategies import base

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.repair import planner
from nova_scoped_policies.watcher import efficacy
from nova_scoped_policies.watcher import goal
from nova_scoped_policies.watcher import plugin
from nova_scoped_policies.watcher import sequence
from nova_scoped_policies.watcher import world

LOG = logging.getLogger(__name__)

NAME = 'scoped_policy_repair'
DISPLAY_NAME = 'Scoped policy repair'
LIVE = 'live'
BYSTANDERS = 'bystanders'
"""The audit parameter: other instances may move to make room."""
_STORES: typing.Dict[str, store_api.PolicyStore] = {}
"""One policy store (one connection pool) per URL for the decision
engine's life: Watcher loads a new strategy for every audit."""


class ScopedPolicyRepair(plugin.Named, base.BaseStrategy):
    """Scoped policy repair

    *Description*

    Ends the hard violations of the scoped policies of server groups and
    stacks with the fewest live migrations, in an order that is safe to
    stop at any step: nova-scoped-policies' repair planner decides the
    moves (each fits the capacity the ones before it left and adds no
    violation; each server moves once),
    and the action plan holds exactly those moves, each action waiting for
    the one before it (planner ``scoped_policy_sequence``). Other
    instances may move to make room, as in the policy API's repair plans
    (the audit parameter ``bystanders``). When no repair exists the
    action plan is empty and its status message says which policy or
    resource stops it.

    *Requirements*

    * The policy store of nova-scoped-policies, reachable from the
      decision engine (``[watcher_strategies.scoped_policy_repair]
      policy_store_connection``).
    * OR-Tools (``pip install nova-scoped-policies[watcher]``).

    *Limitations*

    * Live migration only: instances that are not active, and those the
      audit's scope excludes, count where they are and never move.
    * Hosts' traits are not in Watcher's data model: nova-scheduler
      checks a group's or stack's servers' traits at each move (no move is
      forced); an instance whose flavor names traits, or whose owner
      locked it, is never moved only to make room.
    """

    NAME = NAME
    DISPLAY_NAME = DISPLAY_NAME

    def __init__(self, config, osc=None) -> None:
        super().__init__(config, osc)
        self._planner = sequence.NAME
        self._store: typing.Optional[store_api.PolicyStore] = None
        self._nova: typing.Optional[world.Nova] = None
        self.repair: typing.Optional[planner.Plan] = None
        self.moves: typing.Tuple[planner.Move, ...] = ()

    @classmethod
    def get_goal_name(cls) -> str:
        return goal.NAME

    @classmethod
    def get_config_opts(cls) -> list:
        return [
            cfg.StrOpt(
                'policy_store_connection',
                secret=True,
                help="""
SQLAlchemy URL of nova-scoped-policies' policy store: the ``[policy_store]
connection`` of the policy API service. The strategy reads the scopes, the
scoped policies and members of server groups, and the stack decisions
there; it never writes.
"""),
            cfg.FloatOpt(
                'time_limit',
                default=10.0,
                min=0.5,
                help="""
Seconds the repair planner may take for one audit; broken groups and stacks
share them. Raise it when audits of large clouds end with a plan that is
not proven fewest (the decision engine's log says so).

Related options: ``[scoped_policies_api] repair_time_limit`` of the policy
API's own repair plans.
"""),
        ]

    @classmethod
    def get_schema(cls) -> dict:
        """The audit's parameters."""
        return {
            'properties': {
                BYSTANDERS: {
                    'description': (
                        'Instances of no broken group or stack may move to '
                        'make room, when that takes fewer moves or is the '
                        'only way (false: only the broken groups\' and '
                        'stacks\' own instances move)'),
                    'type': 'boolean',
                    'default': True,
                },
            },
            'additionalProperties': False,
        }

    @property
    def store(self) -> store_api.PolicyStore:
        """The policy store of ``policy_store_connection``."""
        if self._store is None:
            url = self.config.policy_store_connection
            if not url:
                raise ValueError(
                    f'[watcher_strategies.{NAME}] policy_store_connection '
                    'is not set: the strategy cannot read the policy store')
            if url not in _STORES:
                _STORES[url] = store_api.PolicyStore(url)
            self._store = _STORES[url]
        return self._store

    @store.setter
    def store(self, store: store_api.PolicyStore) -> None:
        self._store = store

    @property
    def nova(self) -> world.Nova:
        """Nova's aggregates and server group members, through Watcher's
        own Nova client."""
        if self._nova is None:
            self._nova = world.WatcherNova.from_watcher()
        return self._nova

    @nova.setter
    def nova(self, nova: world.Nova) -> None:
        self._nova = nova

    @property
    def summary(self) -> str:
        """The outcome in one line, for the action plan's status
        message."""
        found = self.repair
        if found is None:
            return ''
        if found.status == planner.REPAIRED and self.moves:
            temporary = sum(m.temporary for m in self.moves)
            return (f'{planner.REPAIRED}: {len(self.moves)} live migrations '
                    f'({temporary} temporary) end {len(found.before)} '
                    'violations')
        if found.status == planner.NOTHING:
            return f'{planner.NOTHING}: no hard violation of a scoped policy'
        return f'{found.status}: {found.reason}'

    def pre_execute(self) -> None:
        self._pre_execute()

    def do_execute(self, audit=None) -> None:
        model = self.compute_model
        found = world.plan(model, self.store, self.nova,
                           self.config.time_limit,
                           self.input_parameters.get(BYSTANDERS, True))
        if found.status == planner.REPAIRED and _repeats(found.moves):
            # Watcher keeps one of two equal actions: the order would break
            found = planner.Plan(
                planner.IMPOSSIBLE, reason='the plan takes one live '
                'migration twice, which one action plan cannot hold',
                seconds=found.seconds, before=found.before,
                after=found.before)
        self.repair = found
        self.moves = found.moves if found.status == planner.REPAIRED else ()
        if found.status in (planner.IMPOSSIBLE, planner.NOT_FOUND):
            LOG.warning('No repair of the scoped policies (%s): %s',
                        found.status, found.reason)
        elif found.status == planner.REPAIRED and not found.optimal:
            LOG.info('The repair plan of %d moves is not proven fewest in '
                     '%.1f s', len(self.moves), self.config.time_limit)
        for move in self.moves:
            self.add_action_migrate(
                model.get_instance_by_uuid(move.server), LIVE,
                model.get_node_by_name(move.source),
                model.get_node_by_name(move.destination))

    def post_execute(self) -> None:
        found = self.repair
        self.solution.set_efficacy_indicators(**{
            efficacy.VIOLATIONS_BEFORE: len(found.before),
            efficacy.VIOLATIONS_AFTER: len(
                found.after if self.moves else found.before),
            efficacy.MIGRATIONS: len(self.moves),
            efficacy.TEMPORARY: sum(m.temporary for m in self.moves),
        })
        LOG.info('Scoped policy repair: %s', self.summary)


def _repeats(moves: typing.Sequence[planner.Move]) -> bool:
    seen = {(m.server, m.source, m.destination) for m in moves}
    return len(seen) != len(moves)
