"""soft-license-pack's rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    Row({'policies': ['soft-license-pack:oracle']}, ['h1', 'h1', 'h2'], ALL,
        weights={'h1': 1.0, 'h2': 1.0, 'h3': 0.0}),
]
