"""The HTTP services of the separate-process cloud (see ``__init__``).

Run as ``python -m tests.functional.cloud.serve ROLE`` from the
repository; configuration comes from the environment the parent sets
(``OS_PLACEMENT_CONFIG_DIR``, ``OS_NOVA_CONFIG_DIR``...). Each prints its
URL on one line, then serves until stdin closes.

``placement``: the real Placement WSGI application on the deployment's
database. ``NSP_PLACEMENT_LATENCY`` seconds are added to each
``GET /allocation_candidates``, so that the schedulers' decisions overlap.
``nova-api``: nova's real compute API WSGI application.
``keystone``: Keystone's public WSGI application (run from the
virtualenv that has Keystone, with ``OS_KEYSTONE_CONFIG_FILES``) on
``NSP_KEYSTONE_PORT``, the port its catalog was bootstrapped with, one
request at a time: its SQLite database refuses a second writer at once
("database is locked", whatever the busy timeout) when two transactions
would upgrade their locks together.
``policy-api``: the policy API's WSGI application as uwsgi loads it
(``nova_scoped_policies.api.wsgi.init_application``: the files of
``NSP_CONFIG_FILES``, the stack reaper running).
``stubs``: what nova-api asks glance and neutron, read only: one image
(the image is never downloaded: the computes run nova's fake virt driver)
and no ports, networks or other neutron resources (the servers boot with
``networks: none``).
"""

import json
import os
import sys
import time

from tests.functional import wsgi_server

IMAGE = {
    'id': '155d900f-4e14-4e4c-a73d-069cbf4541e6',
    'name': 'cirros',
    'status': 'active',
    'visibility': 'public',
    'protected': False,
    'container_format': 'bare',
    'disk_format': 'raw',
    'size': 1024,
    'min_ram': 0,
    'min_disk': 0,
    'tags': [],
    'owner': 'admin',
    'created_at': '2026-01-01T00:00:00Z',
    'updated_at': '2026-01-01T00:00:00Z',
    'self': '/v2/images/155d900f-4e14-4e4c-a73d-069cbf4541e6',
    'file': '/v2/images/155d900f-4e14-4e4c-a73d-069cbf4541e6/file',
    'schema': '/v2/schemas/image',
}
# glanceclient and nova read an image's attributes through its schema
IMAGE_SCHEMA = {'name': 'image', 'properties': {key: {} for key in IMAGE},
                'additionalProperties': True}


def _json(start_response, status, body):
    data = json.dumps(body).encode()
    start_response(status, [('Content-Type', 'application/json'),
                            ('Content-Length', str(len(data)))])
    return [data]


STUBS = {'/v2/schemas/image': IMAGE_SCHEMA,
         '/v2/images/' + IMAGE['id']: IMAGE}


def stubs_app(environ, start_response):
    path = environ['PATH_INFO'].rstrip('/')
    if path in STUBS:
        return _json(start_response, '200 OK', STUBS[path])
    parts = path.split('/')
    if len(parts) == 3 and parts[1] == 'v2.0':
        # any neutron list (ports, networks, extensions...) is empty
        return _json(start_response, '200 OK',
                     {parts[2].replace('-', '_'): []})
    return _json(start_response, '404 Not Found',
                 {'message': f'{path} is not served here'})


def _slowed(app, prefix, seconds):
    def slowed(environ, start_response):
        answer = app(environ, start_response)
        if environ['PATH_INFO'].startswith(prefix):
            time.sleep(seconds)
        return answer
    return slowed


def placement():
    from placement.wsgi import api
    latency = float(os.environ.get('NSP_PLACEMENT_LATENCY', '0'))
    return wsgi_server.serve(
        _slowed(api.application, '/allocation_candidates', latency))


def nova_api():
    sys.argv[1:] = []  # nova parses the command line with its options
    from nova.wsgi import osapi_compute
    return wsgi_server.serve(osapi_compute.application)


def keystone():
    sys.argv[1:] = []       # Keystone parses the command line too
    from keystone.server import wsgi
    return wsgi_server.serve(wsgi.initialize_public_application(),
                             threaded=False,
                             port=int(os.environ['NSP_KEYSTONE_PORT']))


def policy_api():
    from nova_scoped_policies.api import wsgi
    return wsgi_server.serve(wsgi.init_application())


ROLES = {'placement': placement, 'nova-api': nova_api,
         'policy-api': policy_api, 'keystone': keystone,
         'stubs': lambda: wsgi_server.serve(stubs_app)}

if __name__ == '__main__':
    print(ROLES[sys.argv[1]](), flush=True)
    # from now on what the services log to stdout goes to their log (the
    # parent reads one line only: a full pipe would block the process)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdin.read()
