"""Fixtures for the nova adapter tests: no database, no services.

The adapters find members' hosts through a locator and scopes and trait
aggregates through the aggregate cache; here both are in-memory stand-ins
for nova's database.
"""

import pytest
from oslo_config import fixture as config_fixture

from nova import objects
from nova_scoped_policies.scheduler import aggregate_cache
from nova_scoped_policies.scheduler import members
from nova_scoped_policies import topology as topo
from nova_scoped_policies.scheduler import state

objects.register_all()


class FakeLocator(members.StaticMemberLocator):
    """member uuid -> host, counting calls (one per request expected)."""

    def __init__(self, placements=None):
        super().__init__(dict(placements or {}))
        self.calls = 0

    def locate(self, context, member_uuids):
        self.calls += 1
        return super().locate(context, member_uuids)

    @classmethod
    def from_host_states(cls, host_states):
        """Members run where nova's HostState.instances says they do."""
        return cls({uuid: hs.host for hs in host_states
                    for uuid in hs.instances})


class StaticAggregates(aggregate_cache.StaticAggregates):
    """The aggregate cache over fixed data, counting topology reads."""

    def __init__(self, topology=None, aggregates=()):
        super().__init__(aggregates, topology or topo.Topology())
        self.calls = 0

    def get(self, context):
        self.calls += 1
        return super().get(context)


def racks(**domains):
    """A topology of rack aggregates: racks(r1=['host1'], r2=[...])."""
    return topo.from_aggregates(
        topo.AggregateInfo(name, name, hosts, {'policy_scope': 'rack'})
        for name, hosts in domains.items())


OURS_ONLY = {
    'enabled_filters': ['ComputeFilter', 'ScopedAffinityFilter',
                        'ScopedAntiAffinityFilter'],
    'weight_classes': [
        'nova_scoped_policies.scheduler.weights.all_weighers'],
}
"""A nova-scheduler whose nova.conf names our group filters and weighers
only: ours replace Nova's, plain groups included (with Nova's named, plain
groups are Nova's: request_builder.nova_enforces)."""


@pytest.fixture(autouse=True)
def ours_replace_novas():
    fixture = config_fixture.Config(state.CONF)
    fixture.setUp()
    fixture.config(group='filter_scheduler', **OURS_ONLY)
    yield
    fixture.cleanUp()


@pytest.fixture
def conf():
    fixture = config_fixture.Config(state.CONF)
    fixture.setUp()
    yield fixture
    fixture.cleanUp()


@pytest.fixture
def install(monkeypatch):
    """install(locator, topology) -> fresh shared RequestStates."""
    def _install(locator=None, topology=None):
        states = state.RequestStates(locator or FakeLocator(),
                                     StaticAggregates(topology))
        monkeypatch.setattr(state, 'STATES', states)
        return states
    return _install
