"""The goal ``scoped_policy_compliance`` and the strategy
``scoped_policy_repair`` in OpenStack Watcher's own decision engine (in
an interpreter of its own: see conftest).

Watcher's sync registers them from our entry points, as the decision
engine does when it starts; each audit then runs end to end through
Watcher's one-shot audit handler on an SQLite database (Watcher's own test
fixtures): the strategy reads Watcher's compute data model, the policy
store (an SQLite file) and Nova's aggregates, and the action plan Watcher
stores holds exactly the repair planner's moves, chained in its order.
The applier then runs such a plan through Watcher's taskflow engine, one
action at a time.
"""

import threading
import time
from unittest import mock

import fixtures
import testtools
from oslo_config import cfg
from oslo_messaging import conffixture
from watcher.applier.actions import migration
from watcher.applier.workflow_engine import default as taskflow_engine
from watcher.applier.loading import default as applier_loading
from watcher.common import context as watcher_context
from watcher.conf import plugins as watcher_plugins
from watcher.decision_engine.audit import oneshot
from watcher.decision_engine.loading import default as loading
from watcher.decision_engine.strategy.strategies import base as strategies
from watcher.decision_engine import sync
from watcher import objects
from watcher.tests import base as watcher_base
from watcher.tests.local_fixtures import conf_fixture
from watcher.tests.local_fixtures import db as db_fixture

from nova_scoped_policies.repair import planner
from nova_scoped_policies.watcher import efficacy
from nova_scoped_policies.watcher import goal
from nova_scoped_policies.watcher import sequence
from nova_scoped_policies.watcher import strategy
from nova_scoped_policies.watcher import world
from tests.unit.watcher import fakes

GROUP = f'watcher_strategies.{strategy.NAME}'
objects.register_all()


class WatcherTest(watcher_base.WatcherBaseTestCase):
    """Watcher's database, configuration and messaging fixtures (those of
    its own unit tests, without the API application they also load)."""

    RACKS = {'rack-1': ['h11', 'h12'], 'rack-2': ['h21', 'h22']}

    def setUp(self):
        super().setUp()
        self.useFixture(conf_fixture.ConfReloadFixture())
        self.useFixture(conffixture.ConfFixture(cfg.CONF)).transport_url = \
            'fake:/'
        self.useFixture(db_fixture.WatcherDatabase())
        self.context = watcher_context.RequestContext(
            project_id='admin', user_id='admin', is_admin=True)
        path = self.useFixture(fixtures.TempDir()).path
        self.store = fakes.store(f'{path}/store.sqlite', self.RACKS)
        # what watcher.conf says: the strategy's options exist once Watcher
        # has loaded it
        loading.DefaultStrategyLoader().load(strategy.NAME)
        self.flags(policy_store_connection=f'sqlite:///{path}/'
                   'store.sqlite', time_limit=5.0, group=GROUP)
        self.nova = fakes.Nova(self.RACKS)
        self.useFixture(fixtures.MockPatchObject(
            world.WatcherNova, 'from_watcher', return_value=self.nova))
        self.model = None
        self.useFixture(fixtures.MockPatchObject(
            strategies.BaseStrategy, 'compute_model',
            new_callable=mock.PropertyMock,
            side_effect=lambda: self.model))
        sync.Syncer().sync()

    def cloud(self, where, nodes=None):
        """Watcher's model: ``where`` instance -> host, on ``nodes``
        (default: a node per host of the racks)."""
        self.model = fakes.compute_model(nodes or [
            fakes.node(h) for hs in self.RACKS.values() for h in hs], where)

    def audit(self, **parameters):
        """Run a one-shot audit of the goal with the strategy (and these
        audit parameters); the action plan, its actions from first to last
        (each the only child of the one before), and its efficacy
        indicators."""
        audit = objects.Audit(
            self.context, uuid=fakes.uid(f'audit/{self.id()}'),
            name='repair', audit_type=objects.audit.AuditType.ONESHOT.value,
            state=objects.audit.State.PENDING, parameters=parameters,
            goal_id=objects.Goal.get_by_name(self.context, goal.NAME).id,
            strategy_id=objects.Strategy.get_by_name(
                self.context, strategy.NAME).id, scope=[],
            auto_trigger=False, force=False)
        audit.create()
        oneshot.OneShotAuditHandler().execute(audit, self.context)
        audit.refresh()
        self.assertEqual(objects.audit.State.SUCCEEDED, audit.state)
        [plan] = objects.ActionPlan.list(
            self.context, filters={'audit_uuid': audit.uuid})
        actions = objects.Action.list(
            self.context, filters={'action_plan_uuid': plan.uuid})
        chain, parent = [], []
        while len(chain) < len(actions):
            [action] = [a for a in actions if a.parents == parent]
            chain.append(action)
            parent = [action.uuid]
        indicators = {i.name: i.value for i in objects.EfficacyIndicator.list(
            self.context, filters={'action_plan_uuid': plan.uuid})}
        return plan, chain, indicators

    def planned(self):
        """The repair planner's moves on the same world."""
        return planner.plan(world.read(self.model, self.store, self.nova),
                            5.0).moves

    @staticmethod
    def moves(chain):
        return [(a.input_parameters['resource_id'],
                 a.input_parameters['source_node'],
                 a.input_parameters['destination_node']) for a in chain]

    def test_goal_strategy_and_planner_load_by_name(self):
        found = loading.DefaultStrategyLoader().load(strategy.NAME)
        self.assertIsInstance(found, strategy.ScopedPolicyRepair)
        self.assertEqual(goal.NAME, found.goal.name)
        self.assertEqual(sequence.NAME, found.planner)
        self.assertEqual(5.0, found.config.time_limit)
        self.assertIsInstance(loading.DefaultGoalLoader().load(goal.NAME),
                              goal.ScopedPolicyCompliance)
        self.assertIsInstance(
            loading.DefaultPlannerLoader().load(sequence.NAME),
            sequence.SequencePlanner)
        # Watcher's listing of its plugins' options has the strategy's
        self.assertIn(GROUP, dict(watcher_plugins.list_opts()))
        # and its database the strategy's audit parameters
        spec = objects.Strategy.get_by_name(
            self.context, strategy.NAME).parameters_spec
        self.assertEqual({'type': 'boolean', 'default': True},
                         {k: v for k, v in spec['properties'][
                             strategy.BYSTANDERS].items()
                          if k != 'description'})
        # and Watcher's database knows the goal with its indicators
        stored = objects.Goal.get_by_name(self.context, goal.NAME)
        self.assertIn(efficacy.VIOLATIONS_AFTER, [
            i['name'] for i in stored.efficacy_specification])

    def test_the_store_connection_is_said_missing(self):
        self.flags(policy_store_connection=None, group=GROUP)
        found = loading.DefaultStrategyLoader().load(strategy.NAME)
        with testtools.ExpectedException(
                ValueError, f'.{GROUP}. policy_store_connection is not set'):
            found.store

    def test_two_members_in_one_rack_take_one_move(self):
        self.cloud({'a': 'h11', 'b': 'h12'})
        fakes.group(self.store, 'db', ['anti-affinity:rack'], ['a', 'b'])
        plan, chain, indicators = self.audit()
        self.assertEqual(1, len(chain))
        self.assertEqual([(m.server, m.source, m.destination)
                          for m in self.planned()], self.moves(chain))
        [action] = chain
        self.assertEqual('migrate', action.action_type)
        self.assertEqual('live', action.input_parameters['migration_type'])
        self.assertIn(action.input_parameters['destination_node'],
                      self.RACKS['rack-2'])
        self.assertEqual(objects.action_plan.State.RECOMMENDED, plan.state)
        self.assertEqual({efficacy.VIOLATIONS_BEFORE: 1,
                          efficacy.VIOLATIONS_AFTER: 0,
                          efficacy.MIGRATIONS: 1, efficacy.TEMPORARY: 0},
                         indicators)
        self.assertEqual(100, plan.global_efficacy[0]['value'])

    def swap(self, bystander=False, **parameters):
        """Two pairs of a stack, each pair wants one rack: p1 and q2
        share the full hA (with L, an instance of no group, when
        ``bystander``), p2 and q1 the full hB; hC has room for one."""
        racks = {'rA': ['hA'], 'rB': ['hB'], 'rC': ['hC']}
        self.nova.aggregates = {fakes.uid(r): frozenset(h)
                                for r, h in racks.items()}
        self.store.delete_scope('rack')
        self.store.create_scope('rack',
                                aggregates=[fakes.uid(r) for r in racks])
        where = {'p1': 'hA', 'q2': 'hA', 'p2': 'hB', 'q1': 'hB'}
        if bystander:
            where['L'] = 'hA'
        self.cloud(where, [fakes.node('hA', vcpus=len(
            [h for h in where.values() if h == 'hA'])), fakes.node('hB'),
            fakes.node('hC', vcpus=1)])
        fakes.stack(self.store, 's', fakes.PAIRS, {
            'p-1': ('p1', 'hA'), 'p-2': ('p2', 'hB'),
            'q-1': ('q1', 'hB'), 'q-2': ('q2', 'hA')})
        return self.audit(**parameters)

    def test_a_bystander_makes_room_for_the_swap(self):
        # issue 48: L leaves the full hA for hC, then the pairs join; the
        # action plan holds the repair service's plan, as the API's does
        plan, chain, indicators = self.swap(bystander=True)
        self.assertEqual([(m.server, m.source, m.destination)
                          for m in self.planned()], self.moves(chain))
        moved = self.moves(chain)
        self.assertEqual(3, len(moved), moved)
        self.assertEqual((fakes.uid('L'), 'hA', 'hC'), moved[0])
        self.assertEqual(3, len({m[0] for m in moved}))
        self.assertEqual({efficacy.VIOLATIONS_BEFORE: 2,
                          efficacy.VIOLATIONS_AFTER: 0,
                          efficacy.MIGRATIONS: 3, efficacy.TEMPORARY: 0},
                         indicators)

    def test_an_audit_may_keep_the_bystanders_where_they_are(self):
        plan, chain, indicators = self.swap(bystander=True,
                                            bystanders=False)
        self.assertEqual([], chain)
        self.assertTrue(plan.status_message.startswith(
            'not found in time: stack '), plan.status_message)

    def test_a_swap_that_moves_a_server_twice_is_not_planned(self):
        # each server moves once in a plan: the swap through the free host
        # is not found, and the plan says so (it is not proven impossible)
        plan, chain, indicators = self.swap()
        self.assertEqual([], chain)
        self.assertTrue(plan.status_message.startswith(
            'not found in time: stack '), plan.status_message)
        self.assertEqual(0, indicators[efficacy.MIGRATIONS])
        self.assertEqual(indicators[efficacy.VIOLATIONS_BEFORE],
                         indicators[efficacy.VIOLATIONS_AFTER])

    def test_an_impossible_repair_plans_nothing_and_says_why(self):
        # three members, two racks: no host is legal for the third
        self.cloud({'a': 'h11', 'b': 'h12', 'c': 'h21'})
        gid = fakes.group(self.store, 'db', ['anti-affinity:rack'],
                          ['a', 'b', 'c'])
        plan, chain, indicators = self.audit()
        self.assertEqual([], chain)
        self.assertEqual(objects.action_plan.State.SUCCEEDED, plan.state)
        self.assertTrue(plan.status_message.startswith(
            f'impossible: group {gid}: policies: anti-affinity:rack cannot '
            'be met'), plan.status_message)
        self.assertEqual(indicators[efficacy.VIOLATIONS_BEFORE],
                         indicators[efficacy.VIOLATIONS_AFTER])
        self.assertEqual(0, indicators[efficacy.MIGRATIONS])
        self.assertEqual(0, plan.global_efficacy[0]['value'])

    def test_nothing_to_do(self):
        self.cloud({'a': 'h11', 'b': 'h21'})
        fakes.group(self.store, 'db', ['anti-affinity:rack'], ['a', 'b'])
        plan, chain, indicators = self.audit()
        self.assertEqual([], chain)
        self.assertEqual('nothing to do: no hard violation of a scoped '
                         'policy', plan.status_message)

    def test_the_applier_runs_the_moves_one_after_the_other(self):
        plan, chain, _ = self.swap()
        running, done = [], []
        lock = threading.Lock()

        def migrate(action):
            with lock:
                running.append(action.instance_uuid)
                overlap = len(running) > 1
            time.sleep(0.05)
            with lock:
                running.remove(action.instance_uuid)
            done.append((action.instance_uuid, action.source_node,
                         action.destination_node, overlap))
            return True
        self.useFixture(fixtures.MockPatchObject(
            migration.Migrate, 'pre_condition'))
        self.useFixture(fixtures.MockPatchObject(
            migration.Migrate, 'execute', autospec=True,
            side_effect=migrate))
        engine = applier_loading.DefaultWorkFlowEngineLoader().load(
            'taskflow', context=self.context, applier_manager=mock.Mock())
        self.assertIsInstance(engine, taskflow_engine.DefaultWorkFlowEngine)
        engine.execute(objects.Action.list(
            self.context, filters={'action_plan_uuid': plan.uuid},
            eager=True))
        self.assertEqual([m + (False,) for m in self.moves(chain)], done)
