"""``/repairs/tasks`` (microversion 1.4; administrators, and with Secure
RBAC a project's readers for its own): the tasks that
carry repair plans out.

A task of a real repair is made, followed to its end and cancelled too
late by the scenario test ``test_repairs``; here, what the API answers
around them.
"""

from tempest.lib.common.utils import data_utils
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from nova_scoped_policies.tempest.tests.api import test_repairs
from nova_scoped_policies.tempest.tests import base


class RepairTasksTest(test_repairs.RepairsBase):
    """Listing and reading tasks."""

    @decorators.idempotent_id('8b6adcb8-5107-4c29-89eb-c374155c819f')
    def test_an_administrator_lists_the_tasks_newest_first(self):
        tasks = self.admin.repairs.list_tasks()['tasks']
        created = [t['created_at'] for t in tasks]
        self.assertEqual(sorted(created, reverse=True), created)
        for task in tasks:
            shown = self.admin.repairs.show_task(task['id'])['task']
            self.assertEqual(task['id'], shown['id'])
            self.assertIn(shown['status'], ('running', 'applied', 'stopped',
                                            'cancelled', 'interrupted'))


class RepairTasksNegativeTest(test_repairs.RepairsBase):
    """What the tasks API refuses."""

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('fbe45c25-c0a4-4956-a78b-bb821a9f0bd3')
    def test_a_tenant_may_not_read_or_cancel_tasks(self):
        """Before Secure RBAC the tasks are the administrators' alone
        (403); with it, a project's reader follows its own project's tasks
        (an unknown one is 404) and never sees another's, and only
        administrators cancel."""
        if base.CONF.scoped_policies.secure_rbac:
            # the class's own project never started one; other
            # projects' tasks (the scenario test's) are never listed
            self.assertEqual([],
                             self.primary.repairs.list_tasks()['tasks'])
            self.assertRaises(lib_exc.NotFound,
                              self.primary.repairs.show_task,
                              data_utils.rand_uuid())
        else:
            self.assertRaises(lib_exc.Forbidden,
                              self.primary.repairs.list_tasks)
            self.assertRaises(lib_exc.Forbidden,
                              self.primary.repairs.show_task,
                              data_utils.rand_uuid())
        self.assertRaises(lib_exc.Forbidden, self.primary.repairs.cancel_task,
                          data_utils.rand_uuid())

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('99a6ec55-32d5-470c-896d-a94003721763')
    def test_an_unknown_task_is_404(self):
        task = data_utils.rand_uuid()
        exc = self.assertRaises(lib_exc.NotFound,
                                self.admin.repairs.show_task, task)
        self.assertDetail(exc, f'repair task {task} not found')
        self.assertRaises(lib_exc.NotFound, self.admin.repairs.cancel_task,
                          task)

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('004276b1-f3b9-47b1-9362-d279e68f59f1')
    def test_a_malformed_id_is_400(self):
        self.assertRaises(lib_exc.BadRequest, self.admin.repairs.show_task,
                          'not-a-uuid')

    @decorators.attr(type=['negative'])
    @decorators.idempotent_id('9dae06ea-e5c6-4925-9487-20d1cc6e9c8c')
    def test_tasks_need_microversion_1_4(self):
        client = self.at_microversion(self.admin.repairs, '1.3')
        self.assertRaises(lib_exc.NotFound, client.list_tasks)
