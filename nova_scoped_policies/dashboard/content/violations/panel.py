from django.utils.translation import gettext_lazy as _
import horizon

from nova_scoped_policies.dashboard.api import scoped_policies as api


class Violations(horizon.Panel):
    """Every violation of every group and stack in the cloud (admins)."""

    name = _('Violations')
    slug = 'scoped_violations'
    permissions = (f'openstack.services.{api.SERVICE_TYPE}',
                   'openstack.roles.admin')
