"""``/os-server-groups``: the scoped policies of Nova's server groups."""

from nova_scoped_policies.tempest.services import base


class GroupsClient(base.PolicyClient):
    """Scoped policies of server groups, their members and audits."""

    def list_groups(self, **params):
        """``all_projects``, ``project_id`` (administrators)."""
        return self.call('GET', 'os-server-groups', 200, params=params)

    def show_group(self, group_id, **params):
        return self.call('GET', f'os-server-groups/{group_id}', 200,
                         params=params)

    def create_group(self, group_id, **document):
        """Give the Nova server group ``group_id`` scoped policies:
        ``name``, ``policies``, ``rules`` (or ``policy`` from 1.3)."""
        return self.call('POST', 'os-server-groups', 200,
                         {'server_group': dict(document, id=group_id)})

    def update_group(self, group_id, **changes):
        return self.call('POST', f'os-server-groups/{group_id}', 200,
                         {'server_group': changes})

    def delete_group(self, group_id):
        return self.call('DELETE', f'os-server-groups/{group_id}', 204)

    def add_instance(self, group_id, instance_id):
        return self.call('POST', f'os-server-groups/{group_id}/action', 200,
                         {'add_instance': {'instance_id': instance_id}})

    def remove_instance(self, group_id, instance_id):
        return self.call('POST', f'os-server-groups/{group_id}/action', 200,
                         {'remove_instance': {'instance_id': instance_id}})

    def audit_group(self, group_id, **params):
        return self.call('GET', f'os-server-groups/{group_id}/audit', 200,
                         params=params)
