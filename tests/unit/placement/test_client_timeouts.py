"""Every call of the policy API to Placement and Nova is bounded by
default (#37): connect 5 s, read 20 s, the defaults of
``[scoped_policies_api] connect_timeout`` and ``read_timeout``; a
``timeout`` set in ``[placement]`` or ``[nova]`` wins."""

from nova_scoped_policies.api import deploy
from nova_scoped_policies.api import nova
from nova_scoped_policies.conf import api as api_conf
from nova_scoped_policies.conf import ksa
from nova_scoped_policies.placement import client as pc
from tests.functional.api import fixtures as fx


def test_the_defaults_are_connect_5_and_read_20():
    conf = fx.make_conf()
    assert api_conf.timeouts(conf) == (5.0, 20.0) == pc.TIMEOUT
    client = pc.PlacementClient.for_endpoint('http://127.0.0.1:1')
    assert client.adapter.session.timeout == (5.0, 20.0)


def test_the_service_clients_take_the_options():
    conf = fx.make_conf(connect_timeout=2, read_timeout=7)
    conf.set_override('auth_type', 'none', group='nova')
    conf.set_override('endpoint_override', 'http://127.0.0.1:1',
                      group='nova')
    ksa.register_ks_opts(conf, pc.GROUP)
    conf.set_override('auth_type', 'none', group=pc.GROUP)
    try:
        service = deploy.Service(conf, store=None)
        assert service.placement.adapter.session.timeout == (2.0, 7.0)
        assert service.nova.adapter.session.timeout == (2.0, 7.0)
    finally:
        _clear(conf, nova=('auth_type', 'endpoint_override'),
               placement=('auth_type',),
               scoped_policies_api=('connect_timeout', 'read_timeout'))


def test_a_timeout_of_the_group_wins():
    conf = fx.make_conf()
    conf.set_override('auth_type', 'none', group='nova')
    conf.set_override('timeout', 3, group='nova')
    try:
        found = nova.NovaGroups.from_conf(conf)
        assert found.adapter.session.timeout == 3.0
    finally:
        _clear(conf, nova=('auth_type', 'timeout'))


def _clear(conf, **groups):
    """oslo.config shares the overrides of a group object between the
    configurations that register it: take ours back."""
    for group, keys in groups.items():
        for key in keys:
            conf.clear_override(key, group=group)
