"""What issue #29's speed work added besides speed: benchmarks that fail
loudly, a Destination's forbidden aggregates set without coercion, and a
lazy import (no timing here: figures belong to ``tools/benchmark.sh``)."""

import io
import subprocess
import sys
import unittest

from nova import objects

from benchmarks import common
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
