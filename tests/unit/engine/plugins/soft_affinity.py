"""soft-affinity's rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    Row({'policies': ['soft-affinity:rack']}, ['h1'], ALL,
        weights={'h1': 1.0, 'h2': 1.0, 'h3': 0.0},
        against={'h1': False, 'h2': False, 'h3': True, 'h7': True}),
]
