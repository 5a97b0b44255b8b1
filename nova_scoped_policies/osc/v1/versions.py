"""``openstack scoped policy version list``: the API's versions."""

from osc_lib.command import command

from nova_scoped_policies.osc.v1 import common

COLUMNS = ('id', 'status', 'min_version', 'max_version')


class ListVersion(command.Lister):
    """List the policy API's versions and microversion ranges."""

    def take_action(self, args):
        versions = common.client(self).request('GET', '/')['versions']
        return common.rows(versions, COLUMNS)
