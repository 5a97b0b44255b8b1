from django.utils.translation import gettext_lazy as _

from nova_scoped_policies import client

PANEL_GROUP = 'scoped_policies'
PANEL_GROUP_NAME = _('Scoped Policies')
PANEL_GROUP_DASHBOARD = 'project'

ADD_INSTALLED_APPS = ['nova_scoped_policies.dashboard']
# the policy API's refusals are shown as messages, not as error pages
ADD_EXCEPTIONS = {'recoverable': (client.APIError,)}
