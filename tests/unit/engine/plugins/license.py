"""license's rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import Row

ROWS = [
    # h1 and h2 by their aggregate's metadata, h6 by its trait
    Row({'policies': ['license:oracle']}, [], {'h1', 'h2', 'h6'}),
    # only aggregates declare windows: Placement narrows to them
    Row({'policies': ['license:WINDOWS']}, [], {'h3', 'h4'},
        required=[{'windows-hosts'}]),
]
