"""The fake Placement served by the standard library's WSGI server.

``wsgiref`` puts an empty ``CONTENT_LENGTH`` in the environ of every
request without a body (PEP 3333 allows it); real Placement reads an empty
one as no length, so the fake must too. And a length that is no number is
still refused, as Placement refuses it.
"""

import http.client
import json
import threading
from wsgiref import simple_server

import pytest

from nova_scoped_policies.placement import fake


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def served():
    server = simple_server.make_server('127.0.0.1', 0, fake.FakePlacement(),
                                       handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address
    server.shutdown()
    server.server_close()


def _get(address, headers):
    conn = http.client.HTTPConnection(*address, timeout=10)
    try:
        conn.request('GET', '/resource_providers', headers=dict(
            {'OpenStack-API-Version': 'placement 1.14',
             'Accept': 'application/json'}, **headers))
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b'null')
    finally:
        conn.close()


def test_a_bodiless_get_from_wsgiref_is_served(served):
    status, body = _get(served, {})
    assert status == 200, body
    assert body == {'resource_providers': []}


def test_a_length_that_is_no_number_is_refused(served):
    status, body = _get(served, {'Content-Length': 'x'})
    assert status == 400
    assert 'content-length header must be an integer' in json.dumps(body)
