"""JSON schemas of the request bodies, one module per resource."""

UUID = {'type': 'string', 'format': 'uuid',
        'pattern': '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                   '[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'}
