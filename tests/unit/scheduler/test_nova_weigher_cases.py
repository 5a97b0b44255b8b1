"""nova's own soft weigher unit cases, run unchanged on our weighers.

The test methods are nova 34.0.0's
(nova/tests/unit/scheduler/weights/test_weights_affinity.py), inherited as
they are; only ``setUp`` swaps nova's weighers for ours, and the hosts nova
builds also feed our member locator (nova reads members from
``HostState.instances``, ours locate them once per request). They pass
because our weighers fall back to nova's ``[filter_scheduler]`` multipliers
and aggregate keys while ours are not set.
"""

import fixtures

from nova.tests.unit.scheduler.weights import test_weights_affinity as nova
from nova_scoped_policies.scheduler import state
from nova_scoped_policies.scheduler.weights.scoped_soft_affinity import \
    ScopedSoftAffinityWeigher
from nova_scoped_policies.scheduler.weights.scoped_soft_anti_affinity import \
    ScopedSoftAntiAffinityWeigher
from tests.unit.scheduler.conftest import FakeLocator
from tests.unit.scheduler.conftest import OURS_ONLY
from tests.unit.scheduler.conftest import StaticAggregates


class _OurWorld:
    """Members where nova's HostStates say they are."""

    def _clear_attrs(self):
        # nova's TestCase deletes every public attribute after a test,
        # including the bound test method pytest looks up afterwards.
        keep = {'id', self._testMethodName}
        for key in [k for k in self.__dict__
                    if k[0] != '_' and k not in keep]:
            del self.__dict__[key]

    def setUp(self):
        super().setUp()
        # a scheduler naming our weighers only: ours replace Nova's
        self.flags(group='filter_scheduler', **OURS_ONLY)

    def _get_all_hosts(self):
        hosts = super()._get_all_hosts()
        self.useFixture(fixtures.MockPatchObject(
            state, 'STATES', state.RequestStates(
                FakeLocator.from_host_states(hosts), StaticAggregates())))
        return hosts


class TestNovaSoftAffinityCases(_OurWorld,
                                nova.SoftAffinityWeigherTestCase):

    def setUp(self):
        super().setUp()
        self.weighers = [ScopedSoftAffinityWeigher()]
        self.softaffin_weigher = ScopedSoftAffinityWeigher()


class TestNovaSoftAntiAffinityCases(_OurWorld,
                                    nova.SoftAntiAffinityWeigherTestCase):

    def setUp(self):
        super().setUp()
        self.weighers = [ScopedSoftAntiAffinityWeigher()]
        self.antiaffin_weigher = ScopedSoftAntiAffinityWeigher()
