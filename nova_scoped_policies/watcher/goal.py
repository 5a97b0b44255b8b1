"""The goal ``scoped_policy_compliance``."""

from watcher.decision_engine.goal import base

from nova_scoped_policies.watcher import efficacy
from nova_scoped_policies.watcher import plugin

NAME = 'scoped_policy_compliance'
DISPLAY_NAME = 'Scoped policy compliance'


class ScopedPolicyCompliance(plugin.Named, base.Goal):
    """Scoped policy compliance

    No hard violation of the scoped policies of server groups and stacks
    (``anti-affinity:rack``, ``max_server_per_rack``, stacks' groups of
    groups and relationships): the servers run where their policies allow,
    as nova-scheduler with nova-scoped-policies' filters would have put
    them.
    """

    NAME = NAME
    DISPLAY_NAME = DISPLAY_NAME

    @classmethod
    def get_efficacy_specification(cls):
        return efficacy.ScopedPolicyCompliance()
