"""OpenStack Watcher plugins: the repair planner as a goal and a strategy.

Watcher audits the cloud, proposes action plans and applies them; the
repair planner (:mod:`nova_scoped_policies.repair.planner`) decides the
moves. These plugins join them, and live in Watcher's decision engine
(``pip install nova-scoped-policies[watcher]`` in Watcher's virtualenv):

* :mod:`.goal` and :mod:`.efficacy`: the goal ``scoped_policy_compliance``
  (no hard violation of a scoped group or stack policy) and what a
  solution reports against it;
* :mod:`.world`: the planner's :class:`~.planner.Problem` read from
  Watcher's compute data model, the policy store and Nova's aggregates;
* :mod:`.strategy`: the strategy ``scoped_policy_repair``, one live
  migration per planned move;
* :mod:`.sequence`: the planner ``scoped_policy_sequence``, which chains
  the actions so that Watcher's applier runs them one after the other, in
  the repair plan's order.

The repair planner itself knows nothing of Watcher.
"""
