"""Stacks: groups of groups, relationships and one joint decision.

The pure core of ``shared/contracts/stack-document.md`` (no nova, HTTP or
CONF)::

    stack = model.parse(document)                # StackError names the field
    decision = solver.decide(stack, world)       # Decision, replayed through
                                                 # the engine's host checks

The adapters (the policy service's ``/stacks`` routes, the ``scoped_plan``
request filter, the simulator, Heat) build a :class:`solver.World` from
Placement and the topology, then hold the decision in Placement
(:mod:`nova_scoped_policies.placement.holds`).
"""
