"""Bodies of ``/stacks``: the envelope; the stack document's own schema
and meaning are checked by :mod:`nova_scoped_policies.stacks.model`,
which names the field."""

CREATE = {
    'type': 'object',
    'properties': {'stack': {'type': 'object'}},
    'required': ['stack'],
    'additionalProperties': False,
}

_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 64}
ACTION = {
    'type': 'object',
    'properties': {
        'renew': {'type': ['object', 'null'], 'additionalProperties': False,
                  'properties': {'lease_seconds': {
                      'type': 'integer', 'minimum': 1,
                      'maximum': 7 * 24 * 3600}}},
        'confirm': {'type': 'null'},
        'boot_member': {'type': 'object', 'additionalProperties': False,
                        'required': ['name'], 'properties': {
                            'name': _NAME,
                            'instance_uuid': {
                                'type': 'string', 'format': 'uuid',
                                'minLength': 32, 'maxLength': 36,
                                'pattern': '^[0-9a-fA-F-]+$'}}},
    },
    'minProperties': 1,
    'maxProperties': 1,
    'additionalProperties': False,
}
