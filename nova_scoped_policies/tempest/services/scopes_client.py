"""``/os-policy-scopes``: scopes and their domains (host aggregates)."""

from nova_scoped_policies.tempest.services import base


class ScopesClient(base.PolicyClient):
    """Policy scopes (creating and changing them is for administrators)."""

    def list_scopes(self):
        return self.call('GET', 'os-policy-scopes', 200)

    def show_scope(self, scope):
        """``scope``: its name or uuid."""
        return self.call('GET', f'os-policy-scopes/{scope}', 200)

    def create_scope(self, **scope):
        """``name``, ``aggregates``, ``allow_identifiers``... (201)."""
        return self.call('POST', 'os-policy-scopes', 201,
                         {'policy_scope': scope})

    def update_scope(self, scope, **changes):
        return self.call('PUT', f'os-policy-scopes/{scope}', 200,
                         {'policy_scope': changes})

    def delete_scope(self, scope):
        return self.call('DELETE', f'os-policy-scopes/{scope}', 204)

    def add_aggregate(self, scope, aggregate):
        return self.call('POST', f'os-policy-scopes/{scope}/action', 200,
                         {'add_aggregate': {'aggregate': aggregate}})

    def remove_aggregate(self, scope, aggregate):
        return self.call('POST', f'os-policy-scopes/{scope}/action', 200,
                         {'remove_aggregate': {'aggregate': aggregate}})
