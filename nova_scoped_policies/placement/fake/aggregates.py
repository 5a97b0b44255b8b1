"""Handlers of ``/resource_providers/{uuid}/aggregates``.

The model holds a provider's aggregates as a set; Placement lists them in
the order last written, which the app keeps (``app.aggregate_order``).
"""

from nova_scoped_policies.placement import model
from nova_scoped_policies.placement.fake import errors
from nova_scoped_policies.placement.fake import microversion
from nova_scoped_policies.placement.fake import schemas


def get_aggregates(app, req, version, uuid):
    microversion.require(version, (1, 1))
    provider = app.model.provider(uuid)
    order = app.aggregate_order.get(uuid)
    if order is None or set(order) != provider.aggregates:
        order = sorted(provider.aggregates)
    body = {'aggregates': order}
    if version >= (1, 19):
        body['resource_provider_generation'] = provider.generation
    return 200, body


def put_aggregates(app, req, version, uuid):
    microversion.require(version, (1, 1))
    app.model.provider(uuid)
    body = schemas.load(req, schemas.aggregates(version))
    generation = model.UNCHECKED
    if version >= (1, 19):
        generation = body['resource_provider_generation']
        aggregates = body['aggregates']
    else:
        aggregates = body
    try:
        app.model.set_aggregates(uuid, generation, aggregates)
    except model.GenerationConflict:
        raise errors.generation_changed()
    app.aggregate_order[uuid] = list(aggregates)
    return get_aggregates(app, req, version, uuid)
