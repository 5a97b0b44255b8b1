"""A move of a running server through the scheduler: ``migrate``, the
evacuations of ``fail_host`` and the moves of ``repair``.

As nova's conductor does for a cold migration: the server's allocation is
moved to a migration consumer (``POST /allocations``, Placement
microversion 1.28), the scheduler picks a destination with the server's
own RequestSpec (its group, its stack's hints: every policy checks the
move) and claims it for the instance; once it is there the migration's
allocation on the source is deleted. When no host takes it, the
allocation goes back to the instance and the server stays where it was: a
failure with each host's reasons.
"""

import typing

from nova_scoped_policies.simulator import report
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.simulator import specs

MIGRATE = 'migrate'
EVACUATE = 'evacuate'
REPAIR = 'repair'
MOVE_VERSION = '1.28'
"""Consumer generations: what nova's ``move_allocations`` sends."""


def evacuate(sim, hosts: typing.AbstractSet[str]) -> typing.List[str]:
    """Every server of ``hosts`` (down) evacuated through the scheduler,
    one at a time in natural name order; returns those no host took
    (they stay where they are)."""
    servers = sorted((name for name, record in sim.servers.items()
                      if record['host'] in hosts), key=report.natural)
    return [server for server in servers
            if not move(sim, server, EVACUATE)]


def move(sim, server: str, why: str,
         host: typing.Optional[str] = None) -> bool:
    """Move ``server`` to ``host`` (None: where the scheduler picks, not
    its own host); True when it moved.

    :param sim: the simulation.
    :param why: ``migrate``, ``evacuate`` or ``repair`` (the report's).
    """
    record = sim.servers[server]
    source = record['host']
    refused = _refused(server, source, host)
    if refused:
        sim.fail_servers([server], {}, refused, why)
        return False
    launch = record['launch']
    nova = sim.nova
    spec = specs.for_move(nova.spec(launch.alone(server)), record['uuid'],
                          source, host)
    migration = sc.stable_uuid('migration', server)
    _move_allocations(sim.placement, record['uuid'], migration)
    found = nova.schedule(spec, [record['uuid']], launch.project)
    if not found.chosen:
        _move_allocations(sim.placement, migration, record['uuid'])
        sim.fail_servers([server], nova.rejections(spec, found.candidates),
                         found.reason, why)
        return False
    sim.placement.delete_allocations(migration)
    sim.moved(server, found.chosen[0][1], why)
    return True


def _refused(server: str, source: typing.Optional[str],
             host: typing.Optional[str]) -> typing.Optional[str]:
    """Why nova's API refuses the move before scheduling, or None."""
    if source is None:
        return f'{server} runs on no host: nothing to move'
    if host == source:
        return f'{server} runs on {host} already'
    return None


def _move_allocations(placement, source: str, target: str) -> None:
    """Give consumer ``source``'s allocations to ``target`` (a new
    consumer) in one ``POST /allocations``, as nova's
    ``move_allocations`` does."""
    found = placement.request('GET', f'/allocations/{source}',
                              version=MOVE_VERSION).json()
    owner = {'project_id': found['project_id'],
             'user_id': found['user_id']}
    placement.request('POST', '/allocations', {
        source: dict(owner, consumer_generation=found[
            'consumer_generation'], allocations={}),
        target: dict(owner, consumer_generation=None, allocations={
            rp: {'resources': data['resources']}
            for rp, data in found['allocations'].items()}),
    }, version=MOVE_VERSION)


def move_back(sim, server: str, host: str) -> None:
    """Undo a move of ``server``: its allocation and its place go back to
    ``host``, where it was (a resilience case puts the world back)."""
    record = sim.servers[server]
    found = sim.placement.request('GET', f'/allocations/{record["uuid"]}',
                                  version=MOVE_VERSION).json()
    sim.placement.request('PUT', f'/allocations/{record["uuid"]}', {
        'allocations': {sim.uuid_of[host]: {
            'resources': dict(record['resources'])}},
        'project_id': found['project_id'], 'user_id': found['user_id'],
        'consumer_generation': found['consumer_generation']},
        version=MOVE_VERSION)
    sim.relocate(server, host)
