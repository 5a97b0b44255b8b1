PANEL = 'scoped_repairs'
PANEL_DASHBOARD = 'admin'
PANEL_GROUP = 'scoped_policies'
ADD_PANEL = 'nova_scoped_policies.dashboard.content.repairs.panel.Repairs'
