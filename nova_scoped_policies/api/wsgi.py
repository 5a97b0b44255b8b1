"""Entry points of the policy API.

- :func:`init_application`: the WSGI application for uwsgi / mod_wsgi
  (``wsgi-file`` / ``module = nova_scoped_policies.api.wsgi:application``);
  it reads the files named by ``NSP_CONFIG_FILES`` (comma-separated,
  default ``/etc/nova-scoped-policies/nova-scoped-policies.conf``).
- :func:`main`: ``nova-scoped-policies-api``, a single-process server on
  ``[scoped_policies_api] bind_host``:``bind_port`` (127.0.0.1:8799) for
  development and tests.
"""

import os
import sys
import typing
from wsgiref import simple_server

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging

# first: silences eventlet's deprecation warning (which the imports below
# would print) for the console script
from nova_scoped_policies import cmd  # noqa: F401
from nova_scoped_policies.api import deploy
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.db import migration

LOG = logging.getLogger(__name__)
DEFAULT_CONFIG = '/etc/nova-scoped-policies/nova-scoped-policies.conf'
PROJECT = 'nova-scoped-policies'


def _conf(argv: typing.Sequence[str],
          files: typing.Sequence[str] = ()) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    logging.register_options(conf)
    nsp_conf.register_opts(conf)
    conf(list(argv), project=PROJECT, default_config_files=list(files))
    logging.setup(conf, PROJECT)
    return conf


def init_application():
    """The WSGI application, configured from ``NSP_CONFIG_FILES``."""
    files = [f for f in os.environ.get('NSP_CONFIG_FILES',
                                       DEFAULT_CONFIG).split(',') if f]
    return deploy.loadapp(_conf([], files), reaper=True)


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, fmt, *args):
        LOG.info('%s %s', self.address_string(), fmt % args)


def main(argv=None) -> int:
    """``nova-scoped-policies-api [--config-file F]``."""
    conf = _conf(sys.argv[1:] if argv is None else argv)
    try:
        app = deploy.loadapp(conf, reaper=True)
    except migration.SchemaError as exc:
        print(f'nova-scoped-policies-api: {exc}', file=sys.stderr)
        return 2
    except db_exc.DBError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f'nova-scoped-policies-api: [policy_store] connection: '
              f'{first[:300]}', file=sys.stderr)
        return 2
    opts = conf.scoped_policies_api
    server = simple_server.make_server(opts.bind_host, opts.bind_port, app,
                                       handler_class=_QuietHandler)
    LOG.info('nova-scoped-policies-api serving on http://%s:%s/',
             opts.bind_host, server.server_port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
