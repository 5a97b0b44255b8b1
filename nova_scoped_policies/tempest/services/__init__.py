"""The policy API's clients, registered by the plugin as
``<client manager>.scoped_policies.<Name>()``."""

from nova_scoped_policies.tempest.services.export_client import ExportClient
from nova_scoped_policies.tempest.services.groups_client import GroupsClient
from nova_scoped_policies.tempest.services.repairs_client import \
    RepairsClient
from nova_scoped_policies.tempest.services.scopes_client import ScopesClient
from nova_scoped_policies.tempest.services.stacks_client import StacksClient

__all__ = ['ExportClient', 'GroupsClient', 'RepairsClient', 'ScopesClient',
           'StacksClient']
