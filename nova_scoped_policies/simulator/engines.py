"""The simulation of a scenario on an engine: ``fast`` (the embedded
fake Placement called in-process, hosts in classes:
:mod:`.fast`) or ``nova`` (every host through nova's handlers, on the
embedded Placement over its WSGI application, or on a real one at
``placement_url``)."""

import contextlib
import typing

from nova_scoped_policies.simulator import scenario as sc

ENGINES = ('fast', 'nova')


@contextlib.contextmanager
def simulation(scenario: sc.Scenario, engine: str,
               placement_url: typing.Optional[str] = None,
               token: str = 'admin'):
    """A :class:`.runner.Simulation` of ``scenario`` on ``engine`` for
    the ``with`` block (an embedded Placement stops with it).

    :param placement_url: a real (scratch) Placement; ``nova`` only.
    :param token: its ``X-Auth-Token``.
    """
    from nova_scoped_policies.simulator import runner
    if engine == 'fast':
        from nova_scoped_policies.placement import fake
        from nova_scoped_policies.simulator import fast
        yield fast.FastSimulation(scenario, fake.FakePlacement())
        return
    if placement_url:
        from nova_scoped_policies.placement import client as pc
        yield runner.Simulation(scenario, pc.PlacementClient.for_endpoint(
            placement_url, token))
        return
    from nova_scoped_policies.simulator import embedded
    placement = embedded.EmbeddedPlacement()
    try:
        yield runner.Simulation(scenario, placement.start())
    finally:
        placement.stop()
