"""Handlers of ``/resource_providers`` and ``/resource_providers/{uuid}``.

Every provider is a root here: nested providers are not served.
"""

import typing
import uuid as uuidlib

from nova_scoped_policies.placement import model
from nova_scoped_policies.placement.fake import errors
from nova_scoped_policies.placement.fake import queries
from nova_scoped_policies.placement.fake import schemas

_LIST_PARAMS = {'name': (1, 0), 'uuid': (1, 0), 'member_of': (1, 3),
                'resources': (1, 4), 'in_tree': (1, 14),
                'required': (1, 18)}
_RELATIONS = (('aggregates', (1, 1)), ('traits', (1, 6)),
              ('allocations', (1, 11)))
"""Links of a provider after ``self``, ``inventories`` and ``usages``:
relation, first microversion."""


def provider_body(provider: model.Provider, prefix: str, version) -> dict:
    """A provider as Placement shows it.

    :param provider: the provider.
    :param prefix: the script name the links start with.
    :param version: the request's microversion.
    """
    base = f'{prefix}/resource_providers/{provider.uuid}'
    rels = ['inventories', 'usages']
    for rel, since in _RELATIONS:
        if version >= since:
            rels.append(rel)
    body = {'uuid': provider.uuid, 'name': provider.name,
            'generation': provider.generation,
            'links': [{'rel': 'self', 'href': base}] + [
                {'rel': rel, 'href': f'{base}/{rel}'} for rel in rels]}
    if version >= (1, 14):
        body['parent_provider_uuid'] = None
        body['root_provider_uuid'] = provider.uuid
    return body


def create_provider(app, req, version):
    body = schemas.load(req, schemas.provider(version))
    if body.get('parent_provider_uuid'):
        raise errors.not_served('parent_provider_uuid (nested providers)')
    provider = app.model.add_provider(
        str(uuidlib.UUID(body.get('uuid') or str(uuidlib.uuid4()))),
        body['name'])
    location = f'/resource_providers/{provider.uuid}'
    if version >= (1, 20):
        return (200, provider_body(provider, req.script_name, version),
                location)
    return 201, None, location


def list_providers(app, req, version):
    queries.check_params(req.GET, _LIST_PARAMS, version)
    if 'in_tree' in req.GET:
        raise errors.not_served('in_tree (nested providers)')
    uuid = req.GET.get('uuid')
    if uuid is not None and not queries.is_uuid(uuid):
        raise errors.query_error(f"Failed validating 'format': {uuid!r} "
                                 "is not a 'uuid'")
    member_in, member_out = queries.parse_member_of(
        req.GET.getall('member_of'), version)
    query = _filter_query(app.model, req.GET, version)
    found = app.model.find(req.GET.get('name'), uuid, member_in, member_out)
    if query is not None:
        found = [p for p in found if app.model.matches(p, query)
                 and app.model.fits(p, query.resources)]
    return 200, {'resource_providers': [
        provider_body(p, req.script_name, version) for p in found]}


def _filter_query(placement: model.Placement, params, version
                  ) -> typing.Optional[model.CandidateQuery]:
    """``resources`` and ``required`` of ``GET /resource_providers`` as a
    query of the model (None: neither)."""
    if not {'resources', 'required'} & set(params):
        return None
    resources = (queries.parse_resources(params.getall('resources')[-1])
                 if 'resources' in params else {})
    required, forbidden, any_of = queries.parse_traits(
        placement, queries.required_values(params, version), version)
    return model.CandidateQuery(resources, frozenset(required),
                                frozenset(forbidden), (), frozenset(),
                                None, any_of)


def get_provider(app, req, version, uuid):
    return 200, provider_body(app.model.provider(uuid), req.script_name,
                              version)


def update_provider(app, req, version, uuid):
    app.model.provider(uuid)
    body = schemas.load(req, schemas.provider_update(version))
    if body.get('parent_provider_uuid'):
        raise errors.not_served('parent_provider_uuid (nested providers)')
    provider = app.model.rename_provider(uuid, body['name'])
    return 200, provider_body(provider, req.script_name, version)


def delete_provider(app, req, version, uuid):
    if uuid not in app.model.providers:
        raise errors.APIError(404, f'No resource provider with uuid {uuid} '
                              'found for delete')
    try:
        app.model.remove_provider(uuid)
    except model.InUse as exc:
        raise errors.APIError(409, str(exc),
                              'placement.resource_provider.inuse')
    app.aggregate_order.pop(uuid, None)
    return 204, None
