PANEL = 'scoped_violations'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'scoped_policies'
ADD_PANEL = ('nova_scoped_policies.dashboard.content.violations.panel.'
             'Violations')
