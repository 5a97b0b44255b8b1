"""Repair plans: the fewest moves that end every hard violation.

The pure core (no nova, HTTP or CONF)::

    outcome = service.plan(read, asked, who)   # read(wide) -> Cloud
    outcome.plan                               # ordered moves, or why not

:mod:`.service` is the one way a repair is planned (the policy API,
Watcher and the simulator only read their world into its records): it
chooses the targets the caller may repair, makes the other servers
bystanders that may make room, and assembles the planner's problem::

    problem = planner.Problem(hosts, servers, targets, topology, kept)
    plan = planner.plan(problem)       # Plan: ordered moves, or why not

:mod:`.planner` finds the target placement with the joint solver of stacks
(:func:`nova_scoped_policies.stacks.solver.reassign`: the same model, the
fewest servers moved, other servers moved to make room when the problem
names them) and orders the moves so that each fits the capacity the moves
before it left and adds no violation, each server moved once. Violations
are the policies' own audit verdicts
(:func:`nova_scoped_policies.stacks.live.violations`).
"""
