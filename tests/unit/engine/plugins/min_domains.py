"""min_domains_S's rows (see ``tests/unit/engine/test_plugins.py``)."""

from tests.unit.engine.plugins.world import Row

ROWS = [
    # the last member must open a third rack
    Row({'policies': ['soft-anti-affinity:rack'],
         'rules': {'min_domains_rack': 3, 'size': 3}},
        ['h1', 'h3'], {'h5', 'h6'}, forbidden={'rack-1', 'rack-2'}),
]
