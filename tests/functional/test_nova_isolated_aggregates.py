"""Nova's own isolated-aggregate functional tests, our filter doing the
isolation.

``IsolateAggregateFilterTest``, its two variants with and without nova's
aggregate-metadata host filters, and ``TestAggregateFiltersTogether``
(``nova.tests.functional.test_aggregates``, shipped in the nova wheel):
25 tests that reserve hosts with ``trait:<TRAIT>=required`` aggregate
metadata and boot right after. They run here with nova-scoped-policies
configured as the README's nova.conf block configures it, at our
defaults otherwise:

* Nova's ``[scheduler] enable_isolated_aggregate_filtering`` off (every
  test turns it on; here it stays off), ours,
  ``[scoped_policies] enable_forbidden_aggregates_filter``, on, and
  ``enable_scoped_policy_query_filter`` on;
* our filters beside the ones the test enables, our weighers beside the
  ones it loads, the nova seam installed when nova-scheduler starts;
* ``aggregate_refresh_interval`` at its default (30 s) and
  ``aggregate_notifications`` at its default (on).

nova's harness sends its notifications to an in-memory notifier, not over
a transport (Nova's own default is to send none): no aggregate listener
runs, so our filter reads the aggregates' ``trait:`` metadata for every
request, as nova's own filter does. The scheduler's aggregate cache is
the process' own (not one per test, as in our other tests): a copy read
by an earlier test must not decide a later one.
:mod:`tests.functional.test_aggregate_changes` runs the same reservation
with the listener's endpoint fed by nova's notifications.
"""

from oslo_config import cfg

from nova.tests.functional import test_aggregates as nova_tests
from nova_scoped_policies.scheduler import state
from tests.functional import test_nova_server_group as server_group

CONF = cfg.CONF
NOVA_ISOLATION = 'enable_isolated_aggregate_filtering'
CLASSES = ('IsolateAggregateFilterTest',
           'IsolateAggregateFilterTestWithConcernFilters',
           'IsolateAggregateFilterTestWOConcernFilters',
           'TestAggregateFiltersTogether')
"""Nova's classes whose tests reserve aggregates by trait."""


class _OurIsolation(server_group._OurPlugins):
    """Ours isolates, nova's does not: whatever the test sets, nova's
    option stays off."""

    def flags(self, **kw):
        if kw.get('group') == 'scheduler' and NOVA_ISOLATION in kw:
            kw[NOVA_ISOLATION] = False
        return super().flags(**kw)

    def start_service(self, name, *args, **kwargs):
        if name == 'scheduler':
            self.flags(nova_seam=True,
                       enable_forbidden_aggregates_filter=True,
                       enable_scoped_policy_query_filter=True,
                       group='scoped_policies')
        return super().start_service(name, *args, **kwargs)

    def setUp(self):
        super().setUp()
        # every test: nova's filter off, ours reading for every request
        self.assertFalse(CONF.scheduler.enable_isolated_aggregate_filtering)
        self.assertTrue(
            CONF.scoped_policies.enable_forbidden_aggregates_filter)
        self.assertEqual(30, CONF.scoped_policies.aggregate_refresh_interval)
        self.assertTrue(state.states().sources.aggregates.per_request)


def _ours(cls):
    return type(cls.__name__, (_OurIsolation, cls), {
        '__module__': __name__,
        '__doc__': f'nova\'s {cls.__name__}, our isolation filter.'})


for _name in CLASSES:
    globals()[_name] = _ours(getattr(nova_tests, _name))
del _name
