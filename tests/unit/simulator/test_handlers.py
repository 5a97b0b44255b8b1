"""The simulator's request handlers, one module per request kind."""

from nova_scoped_policies.simulator import handlers
from nova_scoped_policies.simulator import scenario as sc


def test_every_request_kind_has_a_handler():
    # imported when a request of the kind first runs: a kind without a
    # module would fail only then
    assert set(handlers.MODULES) == set(sc._REQUEST_KINDS)
    for kind in sc._REQUEST_KINDS:
        assert callable(handlers.handler(kind))
