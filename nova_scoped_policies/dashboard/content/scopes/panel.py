from django.utils.translation import gettext_lazy as _
import horizon

from nova_scoped_policies.dashboard.api import scoped_policies as api


class Scopes(horizon.Panel):
    """Scopes, their domains, and the groups' occupancy (admins)."""

    name = _('Scopes')
    slug = 'scoped_scopes'
    permissions = (f'openstack.services.{api.SERVICE_TYPE}',
                   'openstack.roles.admin')
