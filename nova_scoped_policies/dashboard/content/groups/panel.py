from django.utils.translation import gettext_lazy as _
import horizon

from nova_scoped_policies.dashboard.api import scoped_policies as api


class Groups(horizon.Panel):
    """The project's server groups with scoped policies."""

    name = _('Scoped policies')
    slug = 'scoped_groups'
    permissions = (f'openstack.services.{api.SERVICE_TYPE}',)
