"""Serve Keystone (its WSGI application) on loopback for the dashboard's
browser tests. Runs in ``.venv-horizon``, where Keystone 30 is installed.

``python tests/dashboard/keystone_serve.py KEYSTONE_CONF PORT`` serves on
127.0.0.1:PORT (the port the catalog was bootstrapped with), prints the
URL on one line, then serves until its standard input closes.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

from tests.functional import wsgi_server  # noqa: E402


def main(conf: str, port: str) -> int:
    os.environ['OS_KEYSTONE_CONFIG_FILES'] = conf
    sys.argv[1:] = []       # Keystone parses the command line too
    from keystone.server import wsgi
    app = wsgi.initialize_public_application()
    print(wsgi_server.serve(app, port=int(port)), flush=True)
    sys.stdin.read()
    return 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:]))
