"""The fake Placement served by the standard library's WSGI server.

``wsgiref`` puts an empty ``CONTENT_LENGTH`` in the environ of every
request without a body (PEP 3333 allows it); real Placement reads an empty
one as no length, so the fake must too. And a length that is no number is
still refused, as Placement refuses it.

The server runs in a process of its own: in the suite, nova's tests have
monkey-patched this process with eventlet, and wsgiref's loop would block
it.
"""

import http.client
import json
import subprocess
import sys

import pytest

SERVE = """
import sys
from wsgiref import simple_server
from nova_scoped_policies.placement import fake

class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass

server = simple_server.make_server('127.0.0.1', 0, fake.FakePlacement(),
                                   handler_class=Quiet)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@pytest.fixture
def served():
    proc = subprocess.Popen([sys.executable, '-c', SERVE],
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        yield ('127.0.0.1', port)
    finally:
        proc.kill()
        proc.wait(timeout=30)


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
