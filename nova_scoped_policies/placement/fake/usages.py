"""Handlers of ``/resource_providers/{uuid}/usages`` and ``/usages``."""

import typing

from nova_scoped_policies.placement.fake import microversion
from nova_scoped_policies.placement.fake import queries
from nova_scoped_policies.placement.fake import schemas

_PROJECT_PARAMS = {'project_id': (1, 9), 'user_id': (1, 9),
                   'consumer_type': (1, 38)}


def get_usages(app, req, version, uuid):
    provider = app.model.provider(uuid)
    used = app.model.used(uuid)
    return 200, {'resource_provider_generation': provider.generation,
                 'usages': {rc: used.get(rc, 0)
                            for rc in provider.inventories}}


def get_project_usages(app, req, version):
    """A project's (and user's) usages; from 1.38 by consumer type."""
    microversion.require(version, (1, 9))
    queries.check_params(req.GET, _PROJECT_PARAMS, version)
    schemas.check_query(req.GET, schemas.USAGES_QUERY)
    wanted = req.GET.get('consumer_type')
    totals: typing.Dict[str, dict] = {}
    for consumer in app.model.consumers.values():
        if consumer.project_id != req.GET['project_id'] or \
                req.GET.get('user_id', consumer.user_id) != \
                consumer.user_id:
            continue
        kind = consumer.type or 'unknown'
        if wanted not in (None, 'all', kind):
            continue
        entry = totals.setdefault(kind, {'consumer_count': 0})
        entry['consumer_count'] += 1
        for resources in consumer.allocations.values():
            for rc, n in resources.items():
                entry[rc] = entry.get(rc, 0) + n
    if version < (1, 38):
        usages: typing.Dict[str, int] = {}
        for entry in totals.values():
            for rc, n in entry.items():
                if rc != 'consumer_count':
                    usages[rc] = usages.get(rc, 0) + n
        return 200, {'usages': usages}
    if wanted == 'all':
        merged: typing.Dict[str, int] = {}
        for entry in totals.values():
            for rc, n in entry.items():
                merged[rc] = merged.get(rc, 0) + n
        totals = {'all': merged} if merged else {}
    return 200, {'usages': totals}
