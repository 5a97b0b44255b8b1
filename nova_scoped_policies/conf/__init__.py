"""Configuration options of nova-scoped-policies.

One module per option group, each with ``register_opts(conf)`` and
``list_opts()``; :mod:`nova_scoped_policies.conf.opts` collects them for
oslo-config-generator (entry point ``oslo.config.opts``).
"""

from oslo_config import cfg

from nova_scoped_policies.conf import api
from nova_scoped_policies.conf import notifications
from nova_scoped_policies.conf import quota
from nova_scoped_policies.conf import scheduler
from nova_scoped_policies.conf import store

CONF = cfg.CONF

_MODULES = (scheduler, store, api, notifications, quota)


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every option group of the project on ``conf``."""
    for module in _MODULES:
        module.register_opts(conf)
