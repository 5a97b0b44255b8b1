"""bandwidth's rows (see ``tests/unit/engine/test_plugins.py``): only a
host with a path to every member can carry their pairs; the load of one
pair fits every edge of the world (``test_bandwidth.py`` fills them)."""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    Row({'policies': ['bandwidth:1Gbit']}, [], ALL),
    Row({'policies': ['bandwidth:2000Mbit']}, ['h1'], ALL - {'h7'},
        required=[{'spine-1'}]),
    Row({'policies': ['bandwidth:1000']}, ['h5'], ALL - {'h7'},
        required=[{'spine-1'}]),
]
