"""Policy rules in code (``oslopolicy-sample-generator`` namespace
``nova_scoped_policies.api``)."""

import itertools

from nova_scoped_policies.api.policies import base
from nova_scoped_policies.api.policies import export
from nova_scoped_policies.api.policies import groups
from nova_scoped_policies.api.policies import repairs
from nova_scoped_policies.api.policies import scopes
from nova_scoped_policies.api.policies import stacks


def list_rules():
    """Every rule the API enforces, with its default."""
    return list(itertools.chain(base.list_rules(), scopes.list_rules(),
                                groups.list_rules(), stacks.list_rules(),
                                repairs.list_rules(),
                                export.list_rules()))
