"""Handlers of ``/allocations``, ``/allocations/{consumer}`` and
``/resource_providers/{uuid}/allocations``."""

import typing
import uuid as uuidlib

from nova_scoped_policies.placement import model
from nova_scoped_policies.placement.fake import errors
from nova_scoped_policies.placement.fake import microversion
from nova_scoped_policies.placement.fake import queries
from nova_scoped_policies.placement.fake import schemas

INCOMPLETE_CONSUMER = '00000000-0000-0000-0000-000000000000'
"""Project and user of allocations written before microversion 1.8
(Placement's ``incomplete_consumer_*_id`` defaults)."""


def get_allocations(app, req, version, consumer):
    data = app.model.consumers.get(consumer)
    if data is None:
        return 200, {'allocations': {}}
    body = {'allocations': {
        rp: {'resources': dict(res),
             'generation': app.model.providers[rp].generation}
        for rp, res in data.allocations.items()}}
    if version >= (1, 12):
        body['project_id'] = data.project_id
        body['user_id'] = data.user_id
    if version >= (1, 28):
        body['consumer_generation'] = data.generation
    if version >= (1, 38):
        body['consumer_type'] = data.type or 'unknown'
    return 200, body


def get_provider_allocations(app, req, version, uuid):
    provider = app.model.provider(uuid)
    found = {c: {'resources': dict(data.allocations[uuid])}
             for c, data in app.model.consumers.items()
             if uuid in data.allocations}
    return 200, {'allocations': found,
                 'resource_provider_generation': provider.generation}


def put_allocations(app, req, version, consumer):
    if not queries.is_uuid(consumer):
        raise errors.APIError(400, f'Malformed consumer_uuid: {consumer}')
    body = schemas.load(req, schemas.consumer(version))
    consumer = str(uuidlib.UUID(consumer))
    _apply(app.model, {consumer: _write(app.model, consumer, body, version)})
    return 204, None


def post_allocations(app, req, version):
    """Several consumers at once, all or nothing (microversion 1.13); an
    empty ``allocations`` removes a consumer's allocations."""
    microversion.require(version, (1, 13))
    body = schemas.load(req, schemas.post_allocations(version))
    writes = {}
    for consumer, data in body.items():
        consumer = str(uuidlib.UUID(consumer))
        writes[consumer] = _write(app.model, consumer, data, version)
    _apply(app.model, writes)
    return 204, None


def delete_allocations(app, req, version, consumer):
    app.model.delete(consumer)
    return 204, None


def _write(placement: model.Placement, consumer: str, data: dict,
           version) -> model.Write:
    """A consumer's allocations in a request body (validated).

    :param placement: the model.
    :param consumer: the consumer's uuid.
    :param data: its part of the body.
    :param version: the request's microversion.
    """
    if version < (1, 12):
        allocations = {a['resource_provider']['uuid']:
                       dict(a['resources']) for a in data['allocations']}
    else:
        allocations = {rp: dict(a['resources'])
                       for rp, a in data['allocations'].items()}
    current = placement.consumers.get(consumer)
    return model.Write(
        allocations, data.get('project_id', INCOMPLETE_CONSUMER),
        data.get('user_id', INCOMPLETE_CONSUMER),
        data.get('consumer_type', current.type if current else None),
        data['consumer_generation'] if version >= (1, 28)
        else model.UNCHECKED)


def _apply(placement: model.Placement,
           writes: typing.Mapping[str, model.Write]) -> None:
    """Write consumers' allocations; the model's errors as Placement
    words them."""
    for write in writes.values():
        for rp, resources in write.allocations.items():
            provider = placement.providers.get(rp)
            if provider is None:
                raise errors.APIError(400, 'Allocation for resource provider '
                                      f"'{rp}' that does not exist.")
            for rc in resources:
                if rc not in provider.inventories:
                    _no_inventory(placement, rp, rc)
    try:
        if len(writes) == 1:
            placement.write(*next(iter(writes.items())))
        else:
            placement.write_many(writes)
    except model.GenerationConflict as exc:
        raise errors.APIError(409, 'Inventory and/or allocations changed '
                              f'while attempting to allocate: {exc}',
                              'placement.concurrent_update')
    except model.Conflict as exc:
        raise errors.APIError(409, str(exc))


def _no_inventory(placement: model.Placement, rp: str, rc: str) -> None:
    """An allocation of a class the provider has no inventory of: 400 for
    a class nobody has (Placement: no such class), else 409."""
    if rc not in queries.STANDARD_RCS and not any(
            rc in p.inventories for p in placement.providers.values()):
        raise errors.APIError(400, 'Unable to allocate inventory for '
                              f'consumer: No such resource class {rc}.')
    raise errors.APIError(409, 'Unable to allocate inventory: Inventory for '
                          f"'{rc}' on resource provider '{rp}' invalid.")
