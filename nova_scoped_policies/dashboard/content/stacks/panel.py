from django.utils.translation import gettext_lazy as _
import horizon

from nova_scoped_policies.dashboard.api import scoped_policies as api


class Stacks(horizon.Panel):
    """The project's stack decisions (joint placements under a lease)."""

    name = _('Stacks')
    slug = 'scoped_stacks'
    permissions = (f'openstack.services.{api.SERVICE_TYPE}',)
