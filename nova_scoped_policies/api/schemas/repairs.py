"""Bodies of ``/repairs``."""

_UUID = {'type': 'string', 'minLength': 32, 'maxLength': 36,
         'pattern': '^[0-9a-fA-F-]+$'}
_HOST = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_TARGET = {
    'server_group': _UUID,
    'stack': _UUID,
}

PLAN = {
    'type': 'object',
    'required': ['repair'],
    'additionalProperties': False,
    'properties': {'repair': {
        'type': 'object', 'additionalProperties': False,
        'maxProperties': 1, 'properties': _TARGET}},
}

MOVE = {
    'type': 'object', 'additionalProperties': False,
    'required': ['server', 'from', 'to'],
    'properties': {'server': _UUID, 'from': _HOST, 'to': _HOST,
                   'name': {'type': 'string', 'maxLength': 255},
                   'temporary': {'type': 'boolean'}},
}

APPLY = {
    'type': 'object',
    'required': ['repair'],
    'additionalProperties': False,
    'properties': {'repair': {
        'type': 'object', 'additionalProperties': False,
        'required': ['fingerprint', 'moves'],
        'properties': dict(
            _TARGET,
            fingerprint={'type': 'string', 'pattern': '^[0-9a-f]{64}$'},
            moves={'type': 'array', 'minItems': 1, 'maxItems': 1000,
                   'items': MOVE},
            max_parallel={'type': 'integer', 'minimum': 1,
                          'maximum': 64})}},
}
