"""affinity's rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import Row

ROWS = [
    Row({'policies': ['affinity:rack']}, ['h3'], {'h3', 'h4'},
        required=[{'rack-2'}]),
    Row({'policies': ['affinity:zone:zone-a']}, [], {'h1', 'h3'},
        required=[{'zone-a'}]),
]
