"""soft-anti-affinity's rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    Row({'policies': ['soft-anti-affinity:rack']}, ['h1'], ALL,
        weights={'h1': 0.0, 'h2': 0.0, 'h3': 1.0},
        against={'h1': True, 'h2': True, 'h3': False, 'h7': False}),
]
