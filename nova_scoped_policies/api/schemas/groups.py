"""Bodies of ``/os-server-groups``.

The policy document inside ``server_group`` (policies, rules, llmn...) is
checked by the policy parser, which names the bad key; the schemas check
the envelope.
"""

from nova_scoped_policies.api.schemas import UUID

CREATE = {
    'type': 'object',
    'properties': {'server_group': {
        'type': 'object',
        'properties': {
            'id': UUID,
            'project_id': {'type': 'string', 'minLength': 1,
                           'maxLength': 255},
        },
        'required': ['id'],
    }},
    'required': ['server_group'],
    'additionalProperties': False,
}

UPDATE = {
    'type': 'object',
    'properties': {'server_group': {
        'type': 'object',
        'properties': {'name': {'type': 'string', 'minLength': 1,
                                'maxLength': 255}},
        'minProperties': 1}},
    'required': ['server_group'],
    'additionalProperties': False,
}

_INSTANCE = {'type': 'object', 'properties': {'instance_id': UUID},
             'required': ['instance_id'], 'additionalProperties': False}
ACTION = {
    'type': 'object',
    'properties': {'add_instance': _INSTANCE, 'remove_instance': _INSTANCE},
    'minProperties': 1,
    'maxProperties': 1,
    'additionalProperties': False,
}
