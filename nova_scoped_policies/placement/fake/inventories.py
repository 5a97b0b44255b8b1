"""Handlers of ``/resource_providers/{uuid}/inventories`` and
``/resource_providers/{uuid}/inventories/{rc}``."""

import copy
import typing

import os_resource_classes

from nova_scoped_policies.placement import model
from nova_scoped_policies.placement.fake import errors
from nova_scoped_policies.placement.fake import queries
from nova_scoped_policies.placement.fake import schemas


def _inventories_body(provider: model.Provider) -> dict:
    return {'resource_provider_generation': provider.generation,
            'inventories': copy.deepcopy(provider.inventories)}


def _record(uuid: str, rc: str, data: dict, version,
            action: str = 'update') -> dict:
    """A complete inventory record, checked as Placement checks it.

    :param uuid: the provider.
    :param rc: the resource class.
    :param data: the inventory's fields in the request.
    :param version: the request's microversion.
    :param action: "update" or "create", for the error text.
    """
    if rc not in queries.STANDARD_RCS and not queries.CUSTOM_RE.match(rc):
        raise errors.APIError(400, 'Unknown resource class in inventory for '
                              f'resource provider {uuid}: No such resource '
                              f'class {rc}.')
    record = model.inventory(data)
    if version >= (1, 26):
        bad, limit = record['reserved'] > record['total'], 'total'
    else:
        bad = record['reserved'] >= record['total']
        limit = 'or equal to total'
    if bad:
        raise errors.APIError(400, f'Unable to {action} inventory for '
                              f'resource provider {uuid}: Invalid inventory '
                              f"for '{rc}' on resource provider '{uuid}'. "
                              f'The reserved value is greater than {limit}.')
    return record


def _one(placement: model.Placement, uuid: str, rc: str) -> dict:
    provider = placement.provider(uuid)
    if rc not in provider.inventories:
        raise errors.APIError(404, f'No inventory of class {rc} for {uuid}')
    return provider.inventories[rc]


def _inventory_body(placement: model.Placement, uuid: str, rc: str) -> dict:
    return dict(_one(placement, uuid, rc),
                resource_provider_generation=placement.provider(
                    uuid).generation)


def _check_in_use(placement: model.Placement, uuid: str,
                  inventories: typing.Mapping) -> None:
    """409 when inventory that allocations use would go."""
    used = placement.used(uuid)
    gone = [rc for rc in used if used[rc] and rc not in inventories]
    if gone:
        standard = list(os_resource_classes.STANDARDS)
        gone.sort(key=lambda rc: (standard.index(rc), rc)
                  if rc in queries.STANDARD_RCS else (len(standard), rc))
        raise errors.APIError(409, f"Inventory for '{', '.join(gone)}' on "
                              f"resource provider '{uuid}' in use.",
                              'placement.inventory.inuse')


def get_inventories(app, req, version, uuid):
    return 200, _inventories_body(app.model.provider(uuid))


def put_inventories(app, req, version, uuid):
    app.model.provider(uuid)
    body = schemas.load(req, schemas.INVENTORIES)
    inventories = {rc: _record(uuid, rc, data, version)
                   for rc, data in body['inventories'].items()}
    _check_in_use(app.model, uuid, inventories)
    provider = app.model.set_inventories(
        uuid, body['resource_provider_generation'], inventories)
    return 200, _inventories_body(provider)


def post_inventory(app, req, version, uuid):
    provider = app.model.provider(uuid)
    body = schemas.load(req, schemas.NEW_INVENTORY)
    rc = body.pop('resource_class')
    generation = body.pop('resource_provider_generation',
                          provider.generation)
    inventories = dict(provider.inventories)
    inventories[rc] = _record(uuid, rc, body, version, 'create')
    if rc in provider.inventories:
        raise errors.APIError(409, 'Update conflict: Inventory for requested '
                              f'resource class {rc} already exists.')
    app.model.set_inventories(uuid, generation, inventories)
    return (201, _inventory_body(app.model, uuid, rc),
            f'/resource_providers/{uuid}/inventories/{rc}')


def delete_inventories(app, req, version, uuid):
    if version < (1, 5):
        raise errors.APIError(405, 'The method DELETE is not allowed for '
                              'this resource.',
                              headers={'Allow': 'GET, POST, PUT'})
    provider = app.model.provider(uuid)
    _check_in_use(app.model, uuid, {})
    app.model.set_inventories(uuid, provider.generation, {})
    return 204, None


def get_inventory(app, req, version, uuid, rc):
    return 200, _inventory_body(app.model, uuid, rc)


def put_inventory(app, req, version, uuid, rc):
    provider = app.model.provider(uuid)
    body = schemas.load(req, schemas.INVENTORY_UPDATE)
    generation = body.pop('resource_provider_generation')
    record = _record(uuid, rc, body, version)
    if rc not in provider.inventories:
        raise errors.APIError(400, 'No inventory record with resource class '
                              f'for resource provider {uuid}: {rc}')
    inventories = dict(provider.inventories)
    inventories[rc] = record
    app.model.set_inventories(uuid, generation, inventories)
    return 200, _inventory_body(app.model, uuid, rc)


def delete_inventory(app, req, version, uuid, rc):
    provider = app.model.provider(uuid)
    if rc not in provider.inventories:
        raise errors.APIError(404, f'No inventory of class {rc} found for '
                              'delete')
    inventories = dict(provider.inventories)
    del inventories[rc]
    _check_in_use(app.model, uuid, inventories)
    app.model.set_inventories(uuid, provider.generation, inventories)
    return 204, None
