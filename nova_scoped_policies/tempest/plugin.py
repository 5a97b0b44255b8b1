"""The plugin Tempest loads (entry point ``tempest.test_plugins``:
``scoped_policies``)."""

import os

from tempest import config
from tempest.test_discover import plugins

from nova_scoped_policies.tempest import config as plugin_config


class ScopedPoliciesTempestPlugin(plugins.TempestPlugin):
    """Tests, options and service clients of nova-scoped-policies."""

    def load_tests(self):
        here = os.path.dirname(os.path.abspath(__file__))
        top = os.path.dirname(os.path.dirname(here))
        return os.path.join(here, 'tests'), top

    def register_opts(self, conf):
        conf.register_opt(plugin_config.service_option,
                          group='service_available')
        conf.register_group(plugin_config.group)
        conf.register_opts(plugin_config.opts, group=plugin_config.group)

    def get_opt_lists(self):
        return plugin_config.list_opts()

    def get_service_clients(self):
        """The policy API's clients, as ``os_primary.scoped_policies``."""
        params = config.service_client_config(plugin_config.group.name)
        params.update({
            'name': 'scoped_policies',
            'service_version': 'scoped_policies.v1',
            'module_path': 'nova_scoped_policies.tempest.services',
            'client_names': ['ScopesClient', 'GroupsClient', 'StacksClient',
                             'RepairsClient', 'ExportClient'],
        })
        return [params]
