"""The simulator's embedded Placement: the fake, served in-process."""

import typing

import webob

from oslo_serialization import jsonutils
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


class _Response:
    """What :class:`pc.PlacementClient` reads of a response."""

    def __init__(self, resp: webob.Response) -> None:
        self.status_code = resp.status_code
        self.content = resp.body
        self.text = resp.text

    def json(self) -> typing.Any:
        return jsonutils.loads(self.content)


class InProcessClient(pc.PlacementClient):
    """A client that hands each request to the fake's WSGI app directly.

    The same handlers, validation and microversions as over HTTP, without
    sockets and HTTP parsing: building 5,000 hosts takes seconds, not half a
    minute. Used by the fast engine, which needs the fake itself anyway.

    :param app: the fake Placement.
    :param version: the microversion sent with each request.
    """

    def __init__(self, app: fake.FakePlacement,
                 version: str = pc.DEFAULT_VERSION) -> None:
        super().__init__(None, version)
        self.app = app

    def request(self, method: str, url: str, body=None,
                version: typing.Optional[str] = None,
                ok: typing.Iterable[int] = (200, 201, 204)):
        req = webob.Request.blank(url, method=method, headers={
            'OpenStack-API-Version':
                f'placement {version or self.version}'})
        if body is not None:
            req.content_type = 'application/json'
            req.body = jsonutils.dump_as_bytes(body)
        resp = _Response(req.get_response(self.app))
        if resp.status_code not in ok:
            raise pc.PlacementError(resp.status_code, method, url,
                                    pc._detail(resp))
        return resp
