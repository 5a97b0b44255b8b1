"""A process of the API concurrency suite (test_processes.py).

Run as ``python -m tests.functional.api.serve`` from the repository.
``placement``: a real Placement (in-memory SQLite) seeded with the
world of fixtures.py (hosts, aggregates, instance allocations).
``api STORE_URL PLACEMENT_URL MAX_MEMBERS``: one policy API
process (noauth2) on a shared store database.

Each prints its URL on one line, then serves until stdin closes.
"""

import sys
import threading
from wsgiref import simple_server

from tests.functional.api import fixtures as fx


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class _Threaded(simple_server.WSGIServer):
    """One thread per request, as a real WSGI server runs several."""

    def process_request(self, request, client_address):
        threading.Thread(target=self._handle, daemon=True,
                         args=(request, client_address)).start()

    def _handle(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        finally:
            self.shutdown_request(request)


def _serve(app, threaded=True) -> str:
    server = simple_server.make_server(
        '127.0.0.1', 0, app, handler_class=_Quiet,
        server_class=_Threaded if threaded else simple_server.WSGIServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f'http://127.0.0.1:{server.server_port}'


def placement() -> str:
    from placement import deploy as placement_deploy
    from placement.tests.functional.fixtures import placement as fixture
    from nova_scoped_policies.placement import client as pc
    real = fixture.PlacementFixture(use_intercept=False)
    real.setUp()
    # one thread: the in-memory database is one connection
    url = _serve(placement_deploy.loadapp(real.conf_fixture.conf), False)
    fx.build_placement(pc.PlacementClient.for_endpoint(url, 'admin'))
    return url


def api(store_url: str, placement_url: str, max_members: str) -> str:
    from nova_scoped_policies.api import deploy
    from nova_scoped_policies.db import api as store_api
    from nova_scoped_policies.placement import client as pc
    store = store_api.PolicyStore(store_url)
    return _serve(deploy.loadapp(
        fx.make_conf(max_group_members=int(max_members)), store,
        pc.PlacementClient.for_endpoint(placement_url, 'admin', '1.38')))


if __name__ == '__main__':
    role, args = sys.argv[1], sys.argv[2:]
    print(placement() if role == 'placement' else api(*args), flush=True)
    sys.stdin.read()
