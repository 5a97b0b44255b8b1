"""``/os-policy-scopes``: deployer-defined scopes and their domains."""

import webob

from nova_scoped_policies.api import hosts
from nova_scoped_policies.api import microversion
from nova_scoped_policies.api.policies import scopes as rules
from nova_scoped_policies.api.schemas import scopes as schemas
from nova_scoped_policies.api import util
from nova_scoped_policies.api import views
from nova_scoped_policies.api import visibility
from nova_scoped_policies.notifications import payloads
from nova_scoped_policies.db import records


PARENT_VERSION = '1.1'
"""Scopes have a ``parent`` from this microversion on."""


def _shown(req, record: records.ScopeRecord, who: visibility.Viewer) -> dict:
    out = views.scope(record, who)
    if microversion.require(req.environ, PARENT_VERSION):
        out['parent'] = record.parent
    return out


def _body(req, schema) -> dict:
    data = util.extract_json(req, schema)['policy_scope']
    if 'parent' in data and not microversion.require(req.environ,
                                                     PARENT_VERSION):
        raise webob.exc.HTTPBadRequest(
            explanation='policy_scope.parent: needs microversion '
            f'{PARENT_VERSION}')
    return data


def list_scopes(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    context.can(rules.LIST)
    who = visibility.viewer(req)
    return util.json_response(req, {'policy_scopes': [
        _shown(req, s, who) for s in service.store.list_scopes()]})


def show_scope(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    context.can(rules.SHOW)
    who = visibility.viewer(req)
    record = service.store.get_scope(req.urlvars['scope'])
    return util.json_response(req, {'policy_scope': _shown(req, record,
                                                           who)})


def _check_hosts(service, scope_name, existing, new) -> None:
    twice = hosts.hosts_in_two_domains(service.placement, existing, new,
                                       service.nova)
    if twice:
        raise webob.exc.HTTPConflict(
            explanation=f'hosts {", ".join(twice)} would be in two domains '
            f'of scope {scope_name}; a host may be in at most one')


def _check_parent(service, name, parent) -> None:
    """``parent`` names another existing scope (its nesting is checked
    against the hosts when a stack uses the scopes)."""
    if parent is None:
        return
    if parent == name:
        raise webob.exc.HTTPBadRequest(
            explanation='policy_scope.parent: a scope cannot be its own '
            'parent')
    if parent not in {s.name for s in service.store.list_scopes()}:
        raise webob.exc.HTTPBadRequest(
            explanation=f'policy_scope.parent: {parent}: no such scope')


def create_scope(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    context.can(rules.CREATE)
    data = _body(req, schemas.CREATE)
    _check_parent(service, data['name'], data.get('parent'))
    aggregates = data.pop('aggregates', [])
    if aggregates:
        _check_hosts(service, data['name'], (), aggregates)
    record = service.store.create_scope(aggregates=aggregates, **data)
    service.notify(req, 'policy_scope.create', payloads.of_scope(record))
    return util.json_response(req, {'policy_scope': _shown(
        req, record, visibility.viewer(req))}, status=201)


def update_scope(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    context.can(rules.UPDATE)
    data = _body(req, schemas.UPDATE)
    if data.get('parent') is not None:
        current = service.store.get_scope(req.urlvars['scope'])
        _check_parent(service, data.get('name', current.name),
                      data['parent'])
    record = service.store.update_scope(req.urlvars['scope'], **data)
    service.notify(req, 'policy_scope.update', payloads.of_scope(record))
    return util.json_response(req, {'policy_scope': _shown(
        req, record, visibility.viewer(req))})


def delete_scope(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    context.can(rules.DELETE)
    record = service.store.get_scope(req.urlvars['scope'])
    service.store.delete_scope(req.urlvars['scope'])
    service.notify(req, 'policy_scope.delete', payloads.of_scope(record))
    return util.json_response(req, None, status=204)


def scope_action(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    data = util.extract_json(req, schemas.ACTION)
    ref = req.urlvars['scope']
    if 'add_aggregate' in data:
        context.can(rules.ADD_AGGREGATE)
        aggregate = data['add_aggregate']['aggregate']
        name = service.store.get_scope(ref).name
        # checked with the scope's row locked: two aggregates added to one
        # scope at once are checked one after the other
        record = service.store.add_aggregate(
            ref, aggregate, check=lambda current: _check_hosts(
                service, name, current, [aggregate]))
    else:
        context.can(rules.REMOVE_AGGREGATE)
        record = service.store.remove_aggregate(
            ref, data['remove_aggregate']['aggregate'])
    service.notify(req, 'policy_scope.update', payloads.of_scope(record))
    return util.json_response(req, {'policy_scope': _shown(
        req, record, visibility.viewer(req))})
