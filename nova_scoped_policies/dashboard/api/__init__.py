from nova_scoped_policies.dashboard.api import scoped_policies  # noqa
