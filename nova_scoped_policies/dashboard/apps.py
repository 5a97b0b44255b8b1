from django import apps


class ScopedPoliciesDashboard(apps.AppConfig):
    """Templates and static files of the plugin (a label of its own:
    ``dashboard`` alone is too common)."""

    name = 'nova_scoped_policies.dashboard'
    label = 'nova_scoped_policies_dashboard'
    verbose_name = 'Scoped policies'
