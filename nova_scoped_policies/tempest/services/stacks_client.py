"""``/stacks`` (microversion 1.1): joint decisions held in Placement."""

from nova_scoped_policies.tempest.services import base


class StacksClient(base.PolicyClient):
    """Stack decisions: decide, show, renew, confirm, audit, delete."""

    api_microversion = '1.1'

    def list_stacks(self, **params):
        return self.call('GET', 'stacks', 200, params=params)

    def show_stack(self, stack_id):
        return self.call('GET', f'stacks/{stack_id}', 200)

    def create_stack(self, **stack):
        """Decide the stack document ``stack`` and hold it (201)."""
        return self.call('POST', 'stacks', 201, {'stack': stack})

    def action(self, stack_id, name, value=None):
        return self.call('POST', f'stacks/{stack_id}/action', 200,
                         {name: value})

    def renew_stack(self, stack_id, lease_seconds=None):
        return self.action(stack_id, 'renew',
                           None if lease_seconds is None else
                           {'lease_seconds': lease_seconds})

    def confirm_stack(self, stack_id):
        return self.action(stack_id, 'confirm')

    def audit_stack(self, stack_id):
        """Microversion 1.2."""
        return self.call('GET', f'stacks/{stack_id}/audit', 200)

    def delete_stack(self, stack_id):
        return self.call('DELETE', f'stacks/{stack_id}', 204)
