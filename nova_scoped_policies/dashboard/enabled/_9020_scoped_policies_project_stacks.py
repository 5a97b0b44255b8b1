PANEL = 'scoped_stacks'
PANEL_DASHBOARD = 'project'
PANEL_GROUP = 'scoped_policies'
ADD_PANEL = 'nova_scoped_policies.dashboard.content.stacks.panel.Stacks'
