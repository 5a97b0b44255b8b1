"""spread's rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    # racks hold 1, 1, 0: only rack-3 keeps the skew at most 1
    Row({'policies': ['spread:rack']}, ['h1', 'h3'], {'h5', 'h6'}),
    # max_skew 2: rack-2 too; rack-1 would make 3 - 0
    Row({'policies': ['spread:rack'], 'rules': {'max_skew_rack': 2}},
        ['h1', 'h2', 'h3'], {'h3', 'h4', 'h5', 'h6'}),
    # the first member anywhere in a rack
    Row({'policies': ['spread:rack']}, [], ALL - {'h7'}),
    # only rack-1 and rack-2 eligible (h5, h6 failed other filters): the
    # fewest is 1, so rack-1 (1 + 1 - 1) passes again
    Row({'policies': ['spread:rack']}, ['h1', 'h3'], ALL - {'h7'},
        candidates={'h1', 'h2', 'h3', 'h4'}),
    # the host scope: a host holding no member keeps the fewest at 0, so a
    # second member on h1 is a skew of 2 (and the audit says so)
    Row({'policies': ['spread:host']}, ['h1'], ALL - {'h1'}),
    Row({'policies': ['spread']}, ['h1', 'h3'], ALL - {'h1', 'h3'}),
]
