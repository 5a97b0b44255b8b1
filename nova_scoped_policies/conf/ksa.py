"""keystoneauth1 option sets, shared by every group that reaches a service.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg


def list_ks_opts() -> list:
    """Session, auth (password plugin) and adapter options, for tools."""
    opts = (ks_loading.get_session_conf_options()
            + ks_loading.get_auth_common_conf_options()
            + ks_loading.get_auth_plugin_conf_options('password')
            + ks_loading.get_adapter_conf_options(include_deprecated=False))
    return list({o.dest: o for o in opts}.values())


def register_ks_opts(conf: cfg.ConfigOpts, group: str) -> None:
    """Register keystoneauth1's options on ``group`` unless present."""
    if group in conf and 'auth_type' in conf[group]:
        return
    ks_loading.register_session_conf_options(conf, group)
    ks_loading.register_auth_conf_options(conf, group)
    ks_loading.register_adapter_conf_options(conf, group,
                                             include_deprecated=False)


def load_adapter(conf: cfg.ConfigOpts, group: str, service_type: str,
                 timeout=None):
    """A keystoneauth1 Adapter from the options of ``group``.

    :param timeout: (connect, read) seconds of every call, unless the
        group sets keystoneauth1's own ``timeout``.
    """
    register_ks_opts(conf, group)
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(conf, group,
                                                        auth=auth)
    if session.timeout is None and timeout is not None:
        # requests takes (connect, read); keystoneauth1 passes it on
        session.timeout = tuple(timeout)
    adapter = ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth)
    if not adapter.service_type:
        adapter.service_type = service_type
    return adapter
