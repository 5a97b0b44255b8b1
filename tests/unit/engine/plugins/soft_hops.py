"""soft-hops' rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    Row({'policies': ['soft-hops:2']}, ['h1'], ALL,
        weights={'h1': 1.0, 'h2': 1.0, 'h3': 0.0, 'h7': 0.0},
        against={'h1': False, 'h2': False, 'h3': True, 'h7': True}),
    # every host but h7 puts one pair beyond 4 hops, h7 both
    Row({'policies': ['soft-hops:4']}, ['h1', 'h5'], ALL,
        weights={'h1': 1.0, 'h4': 1.0, 'h6': 1.0, 'h7': 0.0},
        against={'h2': True, 'h7': True}),
    Row({'policies': ['soft-hops:0'],
         'rules': {'weight_soft-hops:0': 3}}, ['h4'], ALL,
        weights={'h4': 3.0, 'h3': 0.0}, against={'h4': False, 'h3': True}),
]
