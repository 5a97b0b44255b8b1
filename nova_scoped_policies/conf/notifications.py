"""Options of the policy service's versioned notifications:
``[scoped_policies_notifications]``.

Whether notifications are sent, by which driver and over which transport is
oslo.messaging's ``[oslo_messaging_notifications]`` (``driver``,
``transport_url``), as for nova: with no driver (the default) nothing is
sent. This group says where they go and how long the sender insists.
"""

from oslo_config import cfg
from oslo_messaging import opts as messaging_opts

from nova_scoped_policies.conf import groups

GROUP = 'scoped_policies_notifications'

group = cfg.OptGroup(
    GROUP,
    title='Versioned notifications of the policy API',
    help="""
Versioned notifications of scoped groups, scopes, stacks, audits and
repairs (``doc/source/admin/notifications.rst``). Turn them on with
``[oslo_messaging_notifications] driver = messagingv2``.
""")

opts = [
    cfg.ListOpt(
        'topics',
        default=['versioned_notifications'],
        help="""
Topics the notifications are sent to (nova's versioned notifications go to
``versioned_notifications`` too, so one consumer reads both).
"""),
    cfg.IntOpt(
        'retry',
        default=3,
        min=-1,
        help="""
Times oslo.messaging reconnects to send one notification before the sender
counts the try as failed (-1: for ever, which stalls every later
notification behind it). A notification the broker did not take is not
dropped: the sender tries it again with back-off (1 s, doubling to 15 s)
until the broker takes it, and the ones emitted meanwhile wait in a queue
of ``queue_size``. Notifications are sent by a background thread after the
change is stored: a broker that is down delays no API request and loses no
write. The outage is logged once when it starts and once when it ends.
"""),
    cfg.IntOpt(
        'queue_size',
        default=10000,
        min=1,
        help="""
Notifications waiting for the sender at most; past that, new ones are
dropped until the queue has room again: the first drop is logged, and the
WARNING that says the broker takes them again (after an outage) or that
the sender caught up (a broker slower than the notifications come) tells
how many were dropped. Raise it to ride out longer outages of a busy service
(each waiting notification holds its payload in memory, about 1 KiB).
"""),
]


MESSAGING_GROUP = 'oslo_messaging_notifications'


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Ours, and oslo.messaging's ``[oslo_messaging_notifications]``
    (its own objects: registering them again there is a no-op)."""
    groups.register(conf, group, opts)
    for name, found in messaging_opts.list_opts():
        if name == MESSAGING_GROUP:
            conf.register_opts(found, group=name)


def list_opts():
    return {group: opts}
