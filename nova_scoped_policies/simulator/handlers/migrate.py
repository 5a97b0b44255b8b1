"""``migrate``: a move through the scheduler, to the host it picks (not
the server's own) or to a named host the filters still check."""

from nova_scoped_policies.simulator import moves
from nova_scoped_policies.simulator import scenario as sc


def handle(sim, request: sc.Migrate) -> int:
    moves.move(sim, request.server, moves.MIGRATE, request.host)
    return 0
