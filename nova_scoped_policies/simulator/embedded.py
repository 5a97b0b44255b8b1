"""The simulator's embedded Placement: the fake, served in-process."""

from oslo_utils import uuidutils
from wsgi_intercept import interceptor

from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import fake


class EmbeddedPlacement:
    """Serve a fresh :class:`fake.FakePlacement` through wsgi-intercept, so
    the simulator talks HTTP to it exactly as to a real Placement."""

    def __init__(self) -> None:
        self.app = fake.FakePlacement()
        self.url = f'http://{uuidutils.generate_uuid()}.invalid/placement'
        self._intercept = None

    def start(self) -> pc.PlacementClient:
        self._intercept = interceptor.RequestsInterceptor(lambda: self.app,
                                                          url=self.url)
        self._intercept.install_intercept()
        return pc.PlacementClient.for_endpoint(self.url)

    def stop(self) -> None:
        if self._intercept is not None:
            self._intercept.uninstall_intercept()
            self._intercept = None
