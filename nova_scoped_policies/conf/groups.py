"""Option groups registered as each configuration's own."""

import typing

from oslo_config import cfg


def register(conf: cfg.ConfigOpts, group: cfg.OptGroup,
             opts: typing.Iterable[cfg.Opt] = ()) -> None:
    """Register ``group`` on ``conf`` (idempotent), then ``opts`` in it.

    oslo.config keeps a shallow copy of the group object it is handed,
    whose table of options (their overrides included) is the object's
    own: two configurations registering one module-level group would
    share every ``set_override``. Each configuration gets a new group of
    the same name instead.

    :param conf: the configuration.
    :param group: the group as its module declares it (name, title,
        help).
    :param opts: the options to register in it.
    """
    conf.register_group(cfg.OptGroup(group.name, title=group.title,
                                     help=group.help))
    opts = list(opts)
    if opts:
        conf.register_opts(opts, group=group.name)
