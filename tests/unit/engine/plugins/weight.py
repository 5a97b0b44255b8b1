"""weight_<policy>'s rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    # soft-affinity:rack counts 3 times soft-anti-affinity:zone
    Row({'policies': ['soft-affinity:rack', 'soft-anti-affinity:zone'],
         'rules': {'weight_soft-affinity:rack': 3}}, ['h1'], ALL,
        weights={'h1': 3.0, 'h2': 3.0, 'h3': 0.0, 'h4': 0.0},
        weigher='soft-affinity'),
]
