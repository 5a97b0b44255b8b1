"""Handlers of ``/traits``, ``/traits/{name}`` and
``/resource_providers/{uuid}/traits`` (all from microversion 1.6)."""

from nova_scoped_policies.placement import model
from nova_scoped_policies.placement.fake import errors
from nova_scoped_policies.placement.fake import microversion
from nova_scoped_policies.placement.fake import queries
from nova_scoped_policies.placement.fake import schemas

SINCE = (1, 6)
_LIST_PARAMS = {'name': (1, 6), 'associated': (1, 6)}


def list_traits(app, req, version):
    microversion.require(version, SINCE)
    queries.check_params(req.GET, _LIST_PARAMS, version)
    names = set(app.model._standard) | app.model.custom_traits
    name = req.GET.get('name')
    if name is not None:
        if name.startswith('in:'):
            names &= set(name[3:].split(','))
        elif name.startswith('startswith:'):
            names = {n for n in names
                     if n.startswith(name[len('startswith:'):])}
        else:
            raise errors.APIError(400, 'Badly formatted name parameter. '
                                  'Expected name query string parameter in '
                                  "form: ?name=[in|startswith]:[name1,name2|"
                                  f"prefix]. Got: \"{name}\"")
    associated = req.GET.get('associated')
    if associated is not None:
        if associated not in ('true', 'false'):
            raise errors.APIError(400, 'The query parameter "associated" '
                                  'only accepts "true" or "false"')
        used = set().union(*(p.traits for p in app.model.providers.values()))
        names = names & used if associated == 'true' else names - used
    return 200, {'traits': sorted(names)}


def get_trait(app, req, version, name):
    microversion.require(version, SINCE)
    if not app.model.known_trait(name):
        raise errors.APIError(404, f'No such trait(s): {name}')
    return 204, None


def put_trait(app, req, version, name):
    microversion.require(version, SINCE)
    if not queries.CUSTOM_RE.match(name) or len(name) > 255:
        raise errors.APIError(400, 'The trait is invalid. A valid trait '
                              'must be no longer than 255 characters, start '
                              'with the prefix "CUSTOM_" and use following '
                              'characters: "A"-"Z", "0"-"9" and "_"')
    status = 201 if app.model.add_trait(name) else 204
    return status, None, f'/traits/{name}'


def delete_trait(app, req, version, name):
    microversion.require(version, SINCE)
    if name in app.model._standard:
        raise errors.APIError(400, f'Cannot delete standard trait {name}.')
    app.model.delete_trait(name)
    return 204, None


def get_traits(app, req, version, uuid):
    microversion.require(version, SINCE)
    provider = app.model.provider(uuid)
    return 200, {'traits': sorted(provider.traits),
                 'resource_provider_generation': provider.generation}


def put_traits(app, req, version, uuid):
    microversion.require(version, SINCE)
    app.model.provider(uuid)
    body = schemas.load(req, schemas.TRAITS)
    _set_traits(app.model, uuid, body['resource_provider_generation'],
                body['traits'])
    return get_traits(app, req, version, uuid)


def delete_traits(app, req, version, uuid):
    microversion.require(version, SINCE)
    provider = app.model.provider(uuid)
    _set_traits(app.model, uuid, provider.generation, [])
    return 204, None


def _set_traits(placement: model.Placement, uuid: str, generation,
                traits) -> None:
    try:
        placement.set_traits(uuid, generation, traits)
    except model.GenerationConflict:
        raise errors.generation_changed()
