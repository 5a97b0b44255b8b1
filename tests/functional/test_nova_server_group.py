"""Nova's own server-group functional tests, with our plugins enabled.

Every test class of ``nova.tests.functional.test_server_group`` (the nova
wheel ships it) runs again here with nova-scoped-policies configured as
the README configures it: our filters beside the ones the test enables,
our weighers beside the ones it loads, our request filters installed
when nova-scheduler starts. Plain nova policies (``affinity``,
``anti-affinity`` and their soft forms, nova's ``max_server_per_host``
rule) are Nova's to enforce: with Nova's group filters and weighers
enabled, ours leave those groups to them, so every test passes as it
does without us, including those that patch Nova's group filter out of
the way to reach the compute's late check (bug 1996732).
"""

import os
import sys
import unittest

from oslo_config import cfg

from nova.tests import fixtures as nova_fixtures
from nova.tests.functional import test_server_group as nova_tests
from tests.functional import base

CONF = cfg.CONF
OUR_FILTERS = ['ScopedAffinityFilter', 'ScopedAntiAffinityFilter']


class _OurPlugins:
    """What the README adds to a nova.conf: set when nova-scheduler
    starts, beside the filters and weighers the test chose."""

    _clear_attrs = base.ScopedPoliciesTestCase._clear_attrs

    def useFixture(self, fixture):
        if isinstance(fixture, nova_fixtures.OSAPIFixture):
            # nova's wheel keeps api-paste.ini in the virtualenv's etc/
            self.flags(api_paste_config=os.path.join(
                sys.prefix, 'etc', 'nova', 'api-paste.ini'), group='wsgi')
        return super().useFixture(fixture)

    def start_service(self, name, *args, **kwargs):
        if name == 'scheduler':
            options = CONF.filter_scheduler
            self.flags(
                available_filters=['nova.scheduler.filters.all_filters',
                                   base.OUR_FILTERS],
                enabled_filters=list(options.enabled_filters) + [
                    f for f in OUR_FILTERS
                    if f not in options.enabled_filters],
                weight_classes=list(options.weight_classes) + [
                    base.OUR_WEIGHERS],
                group='filter_scheduler')
        return super().start_service(name, *args, **kwargs)


def _ours(cls):
    return type(cls.__name__, (_OurPlugins, cls), {
        '__module__': __name__,
        '__doc__': f'nova\'s {cls.__name__}, our plugins enabled.'})


for _name, _cls in sorted(vars(nova_tests).items()):
    if (isinstance(_cls, type) and issubclass(_cls, unittest.TestCase)
            and _cls.__module__ == nova_tests.__name__
            and unittest.TestLoader().getTestCaseNames(_cls)):
        globals()[_name] = _ours(_cls)
del _name, _cls
