"""Django settings of the view tests: Horizon's test settings with the
plugin's enabled/ files (run by pytest-django, ``--ds`` this module)."""

import openstack_dashboard.enabled
from openstack_dashboard.test.settings import *  # noqa: F401,F403
from openstack_dashboard.test.settings import HORIZON_CONFIG
from openstack_dashboard.test.settings import INSTALLED_APPS as _APPS
from openstack_dashboard.utils import settings as settings_utils

import nova_scoped_policies.dashboard.enabled

INSTALLED_APPS = list(_APPS)
settings_utils.update_dashboards(
    [openstack_dashboard.enabled, nova_scoped_policies.dashboard.enabled],
    HORIZON_CONFIG, INSTALLED_APPS)
# Horizon's own apps were added once already
INSTALLED_APPS = list(dict.fromkeys(INSTALLED_APPS))
