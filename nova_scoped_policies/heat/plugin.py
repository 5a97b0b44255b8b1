"""What Heat's ``plugin_dirs`` loads: link or copy this file there (see
doc/source/user/heat.rst); the resources live in the installed package."""

from nova_scoped_policies.heat.resources import resource_mapping  # noqa
