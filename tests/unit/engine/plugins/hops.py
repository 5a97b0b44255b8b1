"""hops' rows (see ``tests/unit/engine/test_plugins.py``).

The world's network tree: tor-1 (h1, h2) and tor-2 (h3, h4) in pod-1,
tor-3 (h5) and h6 itself in pod-2, both pods in spine-1; h7 off the tree.
"""

from tests.unit.engine.plugins.world import ALL
from tests.unit.engine.plugins.world import Row

ROWS = [
    # nobody placed: anywhere, even off the tree
    Row({'policies': ['hops:2']}, [], ALL),
    # 2 hops: the member's top-of-rack switch
    Row({'policies': ['hops:2']}, ['h1'], {'h1', 'h2'},
        required=[{'tor-1'}]),
    Row({'policies': ['hops:4']}, ['h1'], {'h1', 'h2', 'h3', 'h4'},
        required=[{'pod-1'}]),
    # depth is not uniform: h6 hangs off pod-2, 5 hops from h1, 3 from h5
    Row({'policies': ['hops:5']}, ['h1'], {'h1', 'h2', 'h3', 'h4', 'h6'},
        required=[{'spine-1'}]),
    Row({'policies': ['hops:3']}, ['h5'], {'h5', 'h6'},
        required=[{'pod-2'}]),
    Row({'policies': ['hops:6']}, ['h1', 'h5'],
        {'h1', 'h2', 'h3', 'h4', 'h5', 'h6'}, required=[{'spine-1'}]),
    # 0 hops: the member's host (Placement narrows to its switch)
    Row({'policies': ['hops:0']}, ['h3'], {'h3'}, required=[{'tor-2'}]),
    Row({'policies': ['hops:1']}, ['h3', 'h3'], {'h3'},
        required=[{'tor-2'}]),
    # a member off the tree: only its own host reaches it
    Row({'policies': ['hops:4']}, ['h7'], {'h7'}),
]
