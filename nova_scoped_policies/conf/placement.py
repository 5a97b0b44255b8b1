"""Options of the ``[placement]`` group our tools read (keystoneauth1).

Inside nova-scheduler the group is nova's own, registered by nova; our
command-line tools and the policy service read the same options. Not in
:data:`nova_scoped_policies.conf._MODULES` for that reason (registering
them on nova's CONF would duplicate nova's): listed for the sample
config only, and registered by
:meth:`nova_scoped_policies.placement.client.PlacementClient.from_conf`.
"""

from nova_scoped_policies.conf import ksa

GROUP = 'placement'


def list_opts():
    """The keystoneauth1 options of ``[placement]``."""
    return {GROUP: ksa.list_ks_opts()}
