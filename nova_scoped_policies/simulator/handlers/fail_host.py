"""``fail_host``: a host goes down and stays down (never a candidate
again); each of its servers is evacuated through the scheduler, one at a
time in natural name order. A server no host takes stays on it (a
failure with its reasons)."""

from nova_scoped_policies.simulator import moves
from nova_scoped_policies.simulator import report
from nova_scoped_policies.simulator import scenario as sc


def handle(sim, request: sc.FailHost) -> int:
    host = request.host
    if host is None:
        host = sim.servers[request.server]['host']
        if host is None:
            sim.fail_servers([request.server], {}, f'{request.server} runs '
                             'on no host: no host to fail', moves.EVACUATE)
            return 0
    sim.down.add(host)
    for server in sorted((name for name, record in sim.servers.items()
                          if record['host'] == host), key=report.natural):
        moves.move(sim, server, moves.EVACUATE)
    return 0
