"""Bodies of ``/os-policy-scopes``."""

import copy

from nova_scoped_policies.api.schemas import UUID

_FIELDS = {
    'name': {'type': 'string', 'minLength': 1, 'maxLength': 64,
             'pattern': '^[A-Za-z0-9_.-]+$'},
    'allow_identifiers': {'type': 'boolean'},
    'obfuscate_identifiers': {'type': 'boolean'},
    'obfuscate_namespace_uuid': UUID,
    # a coarser scope this one nests in (stacks: scopes as levels)
    'parent': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 64,
               'pattern': '^[A-Za-z0-9_.-]+$'},
}

CREATE = {
    'type': 'object',
    'properties': {'policy_scope': {
        'type': 'object',
        'properties': dict(_FIELDS, aggregates={
            'type': 'array', 'items': UUID, 'uniqueItems': True}),
        'required': ['name'],
        'additionalProperties': False,
    }},
    'required': ['policy_scope'],
    'additionalProperties': False,
}

UPDATE = copy.deepcopy(CREATE)
UPDATE['properties']['policy_scope'] = {
    'type': 'object', 'properties': _FIELDS, 'minProperties': 1,
    'additionalProperties': False}

_AGGREGATE = {'type': 'object', 'properties': {'aggregate': UUID},
              'required': ['aggregate'], 'additionalProperties': False}
ACTION = {
    'type': 'object',
    'properties': {'add_aggregate': _AGGREGATE,
                   'remove_aggregate': _AGGREGATE},
    'minProperties': 1,
    'maxProperties': 1,
    'additionalProperties': False,
}
