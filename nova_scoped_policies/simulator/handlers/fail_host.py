"""``fail_host``: a host goes down and stays down (never a candidate
again); each of its servers is evacuated through the scheduler, one at a
time in natural name order. A server no host takes stays on it (a
failure with its reasons)."""

from nova_scoped_policies.simulator import moves
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
    moves_at = len(sim.moves)
    stayed = moves.evacuate(sim, {host})
    sim.failed_hosts.append({'host': host, 'evacuated': [
        m['server'] for m in sim.moves[moves_at:]], 'stayed': stayed})
    return 0
