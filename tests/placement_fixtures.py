"""Placement endpoints for tests: the real one and our fake, both served
in-process through wsgi-intercept and reached with our keystoneauth1
client."""

import fixtures
from oslo_utils import uuidutils
from placement.tests.functional.fixtures import placement as real_fixture
from wsgi_intercept import interceptor

from nova_scoped_policies.placement import client
from nova_scoped_policies.placement import fake


class FakePlacementFixture(fixtures.Fixture):
    """Serve a :class:`fake.FakePlacement` at ``self.endpoint``."""

    def __init__(self, app=None):
        super().__init__()
        self.app = app or fake.FakePlacement()

    def _setUp(self):
        self.endpoint = f'http://{uuidutils.generate_uuid()}/placement'
        intercept = interceptor.RequestsInterceptor(lambda: self.app,
                                                    url=self.endpoint)
        intercept.install_intercept()
        self.addCleanup(intercept.uninstall_intercept)


def real_placement():
    """openstack-placement's own fixture: real code, SQLite, noauth2."""
    return real_fixture.PlacementFixture(token='admin')


def client_for(fixture, version=client.DEFAULT_VERSION):
    return client.PlacementClient.for_endpoint(fixture.endpoint, 'admin',
                                               version)
