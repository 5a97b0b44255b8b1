"""What Heat's ``plugin_dirs`` loads: link or copy this file there (see
doc/source/user/heat.rst); the resources live in the installed package."""

from nova_scoped_policies.heat import application
from nova_scoped_policies.heat import resources


def resource_mapping():
    return {**resources.resource_mapping(),
            **application.resource_mapping()}
