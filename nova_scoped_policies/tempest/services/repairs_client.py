"""``/repairs`` (1.2) and ``/repairs/tasks`` (1.4): repair plans, their
application and the tasks that carry them out."""

from nova_scoped_policies.tempest.services import base


class RepairsClient(base.PolicyClient):
    """Repair plans, applies and repair tasks."""

    api_microversion = '1.4'

    def plan_repair(self, **target):
        """``server_group`` or ``stack``; none: every group and stack."""
        return self.call('POST', 'repairs', 200, {'repair': target})

    def apply_repair(self, fingerprint, moves, expected=202, **target):
        """Start a repair task (202 from 1.4, with a ``Location``)."""
        return self.call('POST', 'repairs/apply', expected, {'repair': dict(
            target, fingerprint=fingerprint, moves=moves)})

    def list_tasks(self):
        return self.call('GET', 'repairs/tasks', 200)

    def show_task(self, task_id):
        return self.call('GET', f'repairs/tasks/{task_id}', 200)

    def cancel_task(self, task_id):
        return self.call('DELETE', f'repairs/tasks/{task_id}', 202)
