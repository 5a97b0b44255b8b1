"""What issue #29's speed work added besides speed: benchmarks that fail
loudly, a Destination's forbidden aggregates set without coercion, and a
lazy import (no timing here: figures belong to ``tools/benchmark.sh``)."""

import io
import subprocess
import sys
import unittest

from nova import objects

from benchmarks import common
from benchmarks import figures
from nova_scoped_policies.scheduler.request_filters import base

objects.register_all()


class TargetsTest(unittest.TestCase):

    def test_a_missed_target_fails_loudly(self):
        out = io.StringIO()
        targets = common.Targets(out)
        self.assertTrue(targets.check('fast', 3, 2))
        self.assertFalse(targets.check('slow', 3, 2, better='lower',
                                       unit=' s'))
        self.assertFalse(targets.require('same', False))
        self.assertEqual(1, targets.status())
        text = out.getvalue()
        self.assertIn('MISSED slow: 3 s, target <= 2 s', text)
        self.assertIn('MISSED same: False', text)
        self.assertIn('FAILED: 2 figure(s) missed their target', text)

    def test_every_target_met(self):
        out = io.StringIO()
        targets = common.Targets(out)
        targets.check('rate', 2500, 2000, before=1000)
        self.assertEqual(0, targets.status())
        self.assertNotIn('MISSED', out.getvalue())
        self.assertIn('2.50x the figure before', out.getvalue())


class KeyedTargetsTest(unittest.TestCase):
    """A suite prints only the figures it declares (benchmarks/figures.py),
    each under its key with what it is; a run of a declared kind fails
    when one of its figures was not printed; a smoke run holds no time
    target and every yes-or-no figure."""

    def _targets(self, run):
        out = io.StringIO()
        return common.Targets(out, suite='repair', run=run), out

    def _all_but(self, targets, left_out):
        for key, figure in figures.of('repair').items():
            if key == left_out or targets.run not in figure.runs:
                continue
            if key.endswith(('_repaired', '_no_more_moves_than_greedy')):
                targets.require(key, True)
            elif key.endswith('_planner_s'):
                targets.check(key, 60.0, 10, better='lower')
            else:
                targets.figure(key, 1)

    def test_a_line_says_the_key_the_value_and_what_it_is(self):
        targets, out = self._targets(figures.FULL)
        targets.figure('repair_5k_planner_moves', 50)
        line = out.getvalue().strip()
        self.assertTrue(line.startswith('repair_5k_planner_moves: 50 -- '))
        self.assertIn("moves of the planner's plan", line)

    def test_a_key_the_suite_does_not_declare_is_a_bug(self):
        targets, _ = self._targets(figures.FULL)
        for key in ('planner moves', 'sim_cloud_5k_whole_s'):
            with self.assertRaises(KeyError):
                targets.figure(key, 1)

    def test_a_declared_figure_left_out_fails_the_run(self):
        targets, out = self._targets(figures.SMOKE)
        self._all_but(targets, 'repair_1k_greedy_s')
        self.assertEqual(1, targets.status())
        self.assertIn('MISSED repair_1k_greedy_s: not printed (declared '
                      'for a smoke run)', out.getvalue())

    def test_a_smoke_run_holds_no_time_target_and_every_check(self):
        targets, out = self._targets(figures.SMOKE)
        self._all_but(targets, None)
        self.assertEqual(0, targets.status())
        self.assertIn('repair_1k_planner_s: 60 s (target <= 10 s, ratio '
                      '0.17; not held in a smoke run)', out.getvalue())
        targets, out = self._targets(figures.SMOKE)
        self._all_but(targets, 'repair_1k_repaired')
        targets.require('repair_1k_repaired', False)
        self.assertEqual(1, targets.status())
        self.assertIn('MISSED repair_1k_repaired: False', out.getvalue())

    def test_a_run_of_changed_sizes_is_held_to_no_list(self):
        out = io.StringIO()
        targets = common.Targets(out, suite='repair', run=None)
        targets.figure('repair_2k_planner_moves', 3)
        self.assertEqual(0, targets.status())
        self.assertEqual('repair_2k_planner_moves: 3', out.getvalue().strip())

    def test_keys_are_unique_and_say_what_they_are(self):
        self.assertEqual(set(figures.SUITES),
                         {f.suite for f in figures.FIGURES.values()})
        for key, figure in figures.FIGURES.items():
            self.assertEqual(key, figure.key)
            self.assertTrue(figure.what and figure.runs, key)


class ForbidAggregatesTest(unittest.TestCase):

    def _spec(self, current=None):
        spec = objects.RequestSpec()
        if current is not None:
            spec.requested_destination = objects.Destination(
                forbidden_aggregates=current)
        return spec

    def test_as_the_field_setter_sets_it(self):
        for current in (None, set(), {'a'}):
            spec = self._spec(current)
            base.forbid_aggregates(spec, ['b', 'c'])
            dest = spec.requested_destination
            self.assertEqual((current or set()) | {'b', 'c'},
                             dest.forbidden_aggregates)
            self.assertIn('forbidden_aggregates', dest.obj_what_changed())
            # what nova sends: the field serialises as the setter's would
            self.assertEqual(sorted(dest.forbidden_aggregates), sorted(
                objects.Destination(
                    forbidden_aggregates=dest.forbidden_aggregates
                ).forbidden_aggregates))

    def test_other_values_are_still_coerced(self):
        spec = self._spec()
        base.forbid_aggregates(spec, [1])
        self.assertEqual({'1'},
                         spec.requested_destination.forbidden_aggregates)


class LazyImportTest(unittest.TestCase):

    def test_request_filters_leave_nova_s_list_unimported(self):
        code = ('import sys\n'
                'import nova_scoped_policies.scheduler.request_filters\n'
                'print("nova.scheduler.request_filter" in sys.modules)')
        out = subprocess.run([sys.executable, '-W', 'ignore', '-c', code],
                             capture_output=True, text=True, check=True)
        self.assertEqual('False', out.stdout.strip())
