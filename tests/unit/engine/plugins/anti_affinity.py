"""anti-affinity's rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    Row({'policies': ['anti-affinity:rack']}, ['h1', 'h3'], {'h5', 'h6'},
        forbidden={'rack-1', 'rack-2'}),
    Row({'policies': ['anti-affinity:rack'],
         'rules': {'max_server_per_rack': 2}},
        ['h1', 'h2', 'h3'], {'h3', 'h4', 'h5', 'h6'}, forbidden={'rack-1'}),
    # host scope: no aggregate stands for a host, so no constraint
    Row({'policies': ['anti-affinity']}, ['h1'], ALL - {'h1'}),
    Row({'policies': ['anti-affinity:zone:zone-a']}, [],
        {'h2', 'h4', 'h5', 'h6'}, forbidden={'zone-a'}),
]
