"""``add_member`` / ``remove_member``: the policy service's operations,
without enforcement. Removing a member booted into the group takes it out
of Nova's group."""

from nova_scoped_policies.simulator import scenario as sc


def handle(sim, request: sc.Membership) -> int:
    group = sim.groups[request.group]
    uuid = sim.servers[request.server]['uuid']
    if request.add and request.server not in group['members']:
        sim.store.add_member(sim.scenario.groups[request.group].uuid, uuid)
        sim.stored()
        group['members'].append(request.server)
        group['added'].add(request.server)
    elif not request.add and request.server in group['members']:
        sim.leave(request.group, request.server, uuid)
    return 0
