"""The WSGI pipeline of the policy API.

From the outside in: request id -> JSON faults -> microversion -> auth
(keystonemiddleware ``auth_token``, or ``noauth2``) -> request context ->
the route dispatcher. :func:`loadapp` builds it from a configuration.
"""

import threading
import time
import typing
import urllib.parse

from keystonemiddleware import auth_token
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_middleware import request_id
from oslo_middleware import sizelimit
import webob
import webob.dec
import webob.exc

from nova_scoped_policies.api import context as ctx_mod
from nova_scoped_policies.api import handler
from nova_scoped_policies.api import microversion
from nova_scoped_policies.api import nova as nova_mod
from nova_scoped_policies.api import policy as policy_mod
from nova_scoped_policies.api import util
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.conf import api as api_conf
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration
from nova_scoped_policies.db import repair_tasks
from nova_scoped_policies import errors
from nova_scoped_policies import notifications
from nova_scoped_policies.placement import client as pc

LOG = logging.getLogger(__name__)


class Service:
    """What the handlers share: configuration, store, Placement, policy.

    :param conf: the parsed configuration.
    :param store: the policy store.
    :param placement: the Placement client, or a callable making it on
        first use (default: from ``[placement]``).
    :param nova: the Nova client, or a callable making it on first use
        (default: from ``[nova]``; None when that is not configured).
    """

    def __init__(self, conf: cfg.ConfigOpts, store: store_api.PolicyStore,
                 placement: typing.Union[pc.PlacementClient,
                                         typing.Callable[[], typing.Any],
                                         None] = None,
                 nova=None) -> None:
        self.conf = conf
        self.store = store
        self.enforcer = policy_mod.enforcer(conf)
        self._placement = placement or (lambda: pc.PlacementClient.from_conf(
            conf, timeout=api_conf.timeouts(conf)))
        self._nova = nova or (lambda: nova_mod.NovaGroups.from_conf(conf))
        # set to stop the service's background threads (the stack reaper)
        self.stopping = threading.Event()
        self.notifications = notifications.Emitter.from_conf(conf)

    def notify(self, req, event_type: str, payload) -> None:
        """Send a versioned notification of this request (after what it
        stored is stored; never blocks, never fails the request)."""
        self.notifications.emit(event_type, payload,
                                req.environ.get(util.CONTEXT))

    @property
    def placement(self) -> pc.PlacementClient:
        if callable(self._placement):
            self._placement = self._placement()
        return self._placement

    @property
    def nova(self) -> typing.Optional[nova_mod.NovaGroups]:
        if callable(self._nova):
            self._nova = self._nova()
        return self._nova


def _unreadable(environ) -> typing.Optional[str]:
    """What of the request is not UTF-8 (the path or the query), or None."""
    for key, what in (('PATH_INFO', 'path'), ('QUERY_STRING', 'query')):
        raw = environ.get(key, '')
        try:
            text = raw.encode('latin-1').decode('utf-8')
            if key == 'QUERY_STRING':
                urllib.parse.unquote(text, errors='strict')
        except UnicodeError:
            return what
    return None


_IDENTITY_HEADERS = ('X-Project-Id', 'X-User-Id', 'X-Roles')


class FaultWrapper:
    """Unexpected errors become a JSON 500; the traceback goes to the log
    only. Requests nothing behind can read (a path or query that is not
    UTF-8, identity headers over 255 characters) are a JSON 400 here."""

    def __init__(self, app) -> None:
        self.app = app

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> webob.Response:
        bad = _unreadable(req.environ)
        if bad is not None:
            req.environ['PATH_INFO'] = '/'
            req.environ['QUERY_STRING'] = ''
            return util.fault(req, webob.exc.HTTPBadRequest(
                explanation=f'the {bad} of the request is not UTF-8'))
        for header in _IDENTITY_HEADERS:
            if len(req.headers.get(header, '')) > 255:
                return util.fault(req, webob.exc.HTTPBadRequest(
                    explanation=f'{header}: longer than 255 characters'))
        try:
            return req.get_response(self.app)
        except Exception:
            LOG.exception('Unexpected error serving %s %s', req.method,
                          req.path)
            return util.fault(req, webob.exc.HTTPInternalServerError(
                explanation='Unexpected error; see the service log.'))


class MicroversionMiddleware:
    """Reads ``OpenStack-API-Version``; 406 out of range, 400 malformed."""

    def __init__(self, app) -> None:
        self.app = app

    @webob.dec.wsgify
    @util.json_faults
    def __call__(self, req: webob.Request) -> webob.Response:
        try:
            version = microversion.extract(req.environ)
        except microversion.Unacceptable as exc:
            raise webob.exc.HTTPNotAcceptable(
                explanation=f'{microversion.HEADER}: {exc}')
        except ValueError as exc:
            raise webob.exc.HTTPBadRequest(
                explanation=f'{microversion.HEADER}: {exc}')
        req.environ['nsp.microversion'] = version
        resp = req.get_response(self.app)
        resp.headers[microversion.HEADER] = (
            f'{microversion.SERVICE_TYPE} {version}')
        resp.headers['Vary'] = microversion.HEADER
        return resp


IMPLIED_ROLES = {'admin': 'manager', 'manager': 'member', 'member': 'reader'}
"""The role each role implies in Keystone once bootstrapped: a token
carries the roles its roles imply (``admin`` -> ``manager`` ->
``member`` -> ``reader``), and the policy rules name the weakest role
they need."""


def with_implied(roles: str) -> str:
    """X-Roles with the roles they imply, as in a Keystone token."""
    found = [r.strip() for r in roles.split(',') if r.strip()]
    for role in found:
        implied = IMPLIED_ROLES.get(role)
        if implied and implied not in found:
            found.append(implied)
    return ','.join(found)


class NoAuth:
    """``noauth2``: trust the identity headers; X-Project-Id is required.
    X-Roles gets the roles they imply, as a Keystone token would.
    """

    def __init__(self, app) -> None:
        self.app = app

    @webob.dec.wsgify
    @util.json_faults
    def __call__(self, req: webob.Request) -> webob.Response:
        if not req.headers.get('X-Project-Id'):
            raise webob.exc.HTTPUnauthorized(
                explanation='noauth2 needs an X-Project-Id header')
        req.headers['X-Identity-Status'] = 'Confirmed'
        req.headers['X-Roles'] = with_implied(req.headers.get('X-Roles', ''))
        return req.get_response(self.app)


class PublicPaths:
    """Serve version discovery without authentication."""

    def __init__(self, app, authenticated) -> None:
        self.app = app
        self.authenticated = authenticated

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '/') in handler.PUBLIC_PATHS:
            return self.app(environ, start_response)
        return self.authenticated(environ, start_response)


class ContextMiddleware:
    """Builds the :class:`RequestContext` and hands the service over."""

    def __init__(self, app, service: Service) -> None:
        self.app = app
        self.service = service

    @webob.dec.wsgify
    @util.json_faults
    def __call__(self, req: webob.Request) -> webob.Response:
        req.environ[util.SERVICE] = self.service
        if req.path_info not in handler.PUBLIC_PATHS:
            if req.headers.get('X-Identity-Status') != 'Confirmed':
                raise webob.exc.HTTPUnauthorized(
                    explanation='The request needs a valid token.')
            req.environ[util.CONTEXT] = ctx_mod.RequestContext.from_environ(
                req.environ, enforcer=self.service.enforcer)
        return req.get_response(self.app)


def start_reaper(service: Service) -> threading.Thread:
    """Release expired stack holds every ``stack_reap_interval`` seconds,
    and give back holds no stack record knows every
    ``stack_sweep_interval`` seconds, in a daemon thread of this process.
    """
    from nova_scoped_policies.api.handlers import stacks
    from nova_scoped_policies.db import stacks as stack_db

    def loop():
        options = service.conf.scoped_policies_api
        interval = options.stack_reap_interval
        store = stack_db.StackStore(service.store)
        swept = time.monotonic()
        while not service.stopping.wait(interval):
            try:
                stacks.reap(service, store)
            except errors.Unavailable:
                pass   # Placement failed; reap logged it, the next run retries
            except Exception:  # keep reaping; say why once per run
                LOG.exception('Stack reaper run failed')
            if options.stack_sweep_interval and \
                    time.monotonic() - swept >= options.stack_sweep_interval:
                swept = time.monotonic()
                try:
                    stacks.sweep(service, store)
                except pc.PlacementError as exc:
                    LOG.warning('Sweep of orphan stack holds failed, '
                                'retried in %d s: %s',
                                options.stack_sweep_interval, exc)
                except Exception:
                    LOG.exception('Sweep of orphan stack holds failed')
    thread = threading.Thread(target=loop, name='stack-reaper', daemon=True)
    thread.start()
    return thread


def _interrupt_repair_tasks(service: Service) -> None:
    """A process that starts marks interrupted the repair tasks of
    processes of this host that are gone (and any without a heartbeat for
    ``repair_task_stale_seconds``): their moves done stay said."""
    try:
        found = repair_tasks.TaskStore(service.store).interrupt_orphans(
            service.conf.scoped_policies_api.repair_task_stale_seconds)
    except db_exc.DBError as exc:
        LOG.warning('Could not look for interrupted repair tasks: %s', exc)
        return
    for task in found:
        LOG.warning('Repair task %s was interrupted: the API process that '
                    'ran it is gone; a new plan finishes the work', task)


def loadapp(conf: cfg.ConfigOpts, store: store_api.PolicyStore = None,
            placement=None, nova=None, reaper: bool = False):
    """The WSGI application for ``conf``.

    :param conf: parsed configuration (``[scoped_policies_api]``,
        ``[policy_store]``, ``[placement]``, ``[keystone_authtoken]``).
    :param store: the store (default: opened from ``[policy_store]``).
    :param placement: a Placement client or a factory of one.
    :param nova: a Nova client (:class:`nova.NovaGroups`) or a factory.
    :param reaper: start the thread that releases expired stack holds
        (the service's entry points do; tests call :func:`.stacks.reap`).
    """
    nsp_conf.register_opts(conf)
    own_store = store is None
    store = store or store_api.PolicyStore(
        conf.policy_store.connection,
        connect_timeout=conf.policy_store.connect_timeout,
        max_retries=conf.policy_store.max_retries)
    if own_store:
        # a service never serves from a database it does not understand
        migration.check(store.engine)
    service = Service(conf, store, placement, nova)
    _interrupt_repair_tasks(service)
    if reaper and conf.scoped_policies_api.stack_reap_interval:
        start_reaper(service)
    app = ContextMiddleware(handler.Dispatcher(), service)
    if conf.scoped_policies_api.auth_strategy == 'noauth2':
        authenticated = NoAuth(app)
    else:
        authenticated = auth_token.AuthProtocol(
            app, {'oslo_config_config': conf})
    app = PublicPaths(app, authenticated)
    app = MicroversionMiddleware(app)
    # [oslo_middleware] max_request_body_size (114,688 bytes): 413 beyond
    app = sizelimit.RequestBodySizeLimiter(app, conf)
    app = FaultWrapper(app)
    app = request_id.RequestId(app)
    # what the handlers share, for the service's shutdown and for tests
    app.service = service
    return app
