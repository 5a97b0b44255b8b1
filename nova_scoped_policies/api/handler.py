"""The route table of the policy API, and the dispatcher.

Like openstack/placement: one declarative table of path -> method ->
handler; a path that exists with another method answers 405 with an Allow
header, an unknown path 404.
"""

import routes
import webob
import webob.dec
import webob.exc

from nova_scoped_policies.api.handlers import export
from nova_scoped_policies.api.handlers import groups
from nova_scoped_policies.api.handlers import repairs
from nova_scoped_policies.api.handlers import root
from nova_scoped_policies.api.handlers import scopes
from nova_scoped_policies.api.handlers import stacks
from nova_scoped_policies.api import util

ROUTE_DECLARATIONS = {
    '/': {'GET': root.home},
    '/os-policy-scopes': {
        'GET': scopes.list_scopes,
        'POST': scopes.create_scope,
    },
    '/os-policy-scopes/{scope}': {
        'GET': scopes.show_scope,
        'PUT': scopes.update_scope,
        'DELETE': scopes.delete_scope,
    },
    '/os-policy-scopes/{scope}/action': {
        'POST': scopes.scope_action,
    },
    '/os-server-groups': {
        'GET': groups.list_groups,
        'POST': groups.create_group,
    },
    '/os-server-groups/{uuid}': {
        'GET': groups.show_group,
        'POST': groups.update_group,
        'DELETE': groups.delete_group,
    },
    '/os-server-groups/{uuid}/action': {
        'POST': groups.group_action,
    },
    '/os-server-groups/{uuid}/audit': {
        'GET': groups.audit_group,
    },
    # microversion 1.1
    '/stacks': {
        'GET': stacks.stacks_route(stacks.list_stacks),
        'POST': stacks.stacks_route(stacks.create_stack),
    },
    '/stacks/{id}': {
        'GET': stacks.stacks_route(stacks.show_stack),
        'DELETE': stacks.stacks_route(stacks.delete_stack),
    },
    '/stacks/{id}/action': {
        'POST': stacks.stacks_route(stacks.stack_action),
    },
    # microversion 1.2
    '/stacks/{id}/audit': {
        'GET': stacks.stacks_route(stacks.audit_stack),
    },
    '/repairs': {
        'POST': repairs.plan_repair,
    },
    '/repairs/apply': {
        'POST': repairs.apply_repair,
    },
    # microversion 1.4
    '/repairs/tasks': {
        'GET': repairs.list_tasks,
    },
    '/repairs/tasks/{id}': {
        'GET': repairs.show_task,
        'DELETE': repairs.cancel_task,
    },
    # microversion 1.5
    '/export': {
        'GET': export.export_cloud,
    },
}

PUBLIC_PATHS = ('/',)
"""Paths served without authentication (version discovery)."""


def _methods_not_allowed(allowed):
    def handler(req):
        raise webob.exc.HTTPMethodNotAllowed(
            explanation='The method specified is not allowed for this '
            'resource.', headers={'Allow': ', '.join(sorted(allowed))})
    return handler


def make_map(declarations=ROUTE_DECLARATIONS) -> routes.Mapper:
    """A routes Mapper from the declarations (405 routes included)."""
    mapper = routes.Mapper()
    for path, methods in declarations.items():
        for method, handler in methods.items():
            mapper.connect(path, action=handler,
                           conditions={'method': [method]})
        # HEAD and every other method fall through to this route.
        mapper.connect(path, action=_methods_not_allowed(methods))
    return mapper


class Dispatcher:
    """WSGI application calling the handler of the matched route."""

    def __init__(self) -> None:
        self._map = make_map()

    @webob.dec.wsgify
    @util.json_faults
    def __call__(self, req: webob.Request) -> webob.Response:
        match = self._map.match(req.path_info, environ=req.environ)
        if match is None:
            raise webob.exc.HTTPNotFound(
                explanation='The resource could not be found.')
        handler = match.pop('action')
        req.urlvars = match
        return handler(req)
