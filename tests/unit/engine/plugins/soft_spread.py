"""soft-spread's rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    Row({'policies': ['soft-spread:rack']}, ['h1', 'h2', 'h3'], ALL,
        weights={'h1': 0.0, 'h3': 0.5, 'h5': 1.0, 'h7': 0.0}),
    # h7 is in no rack: it weighs as a host of the fullest rack (as
    # Kubernetes scores a node without the topology key)
    Row({'policies': ['soft-spread:rack']}, ['h1', 'h3'], ALL,
        weights={'h1': 0.0, 'h5': 1.0, 'h7': 0.0}),
]
