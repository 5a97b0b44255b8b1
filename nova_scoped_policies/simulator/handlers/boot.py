"""``boot``: one (multi-instance) boot through the scheduler, all or
nothing, as nova's API and conductor make it: the servers exist (members
of their group) before the scheduler picks their hosts; a boot no host
takes leaves every one of its servers failed, with each host's
reasons."""

from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.simulator import specs


def handle(sim, request: sc.Boot) -> int:
    return launch(sim, specs.Launch.of_boot(request))


def servers(sim, request: sc.Boot) -> int:
    return request.count


def launch(sim, launch: specs.Launch) -> int:
    """Boot the servers of ``launch`` as one request through the
    scheduler, all or nothing; returns the servers placed."""
    nova = sim.nova
    spec = nova.spec(launch)
    uuids = sim.register(launch)
    found = nova.schedule(spec, uuids, launch.project)
    if not found.chosen:
        sim.fail_servers(launch.servers, nova.rejections(
            spec, found.candidates), found.reason)
        return 0
    for server, (_, host) in zip(launch.servers, found.chosen):
        sim.placed(server, host)
    return len(found.chosen)
