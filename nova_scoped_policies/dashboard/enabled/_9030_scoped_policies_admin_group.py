from django.utils.translation import gettext_lazy as _

PANEL_GROUP = 'scoped_policies'
PANEL_GROUP_NAME = _('Scoped Policies')
PANEL_GROUP_DASHBOARD = 'admin'
