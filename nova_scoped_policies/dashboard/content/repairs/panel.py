from django.utils.translation import gettext_lazy as _
import horizon

from nova_scoped_policies.dashboard.api import scoped_policies as api


class Repairs(horizon.Panel):
    """Repair plans of any group or stack, and their apply (admins)."""

    name = _('Repair plans')
    slug = 'scoped_repairs'
    permissions = (f'openstack.services.{api.SERVICE_TYPE}',
                   'openstack.roles.admin')
