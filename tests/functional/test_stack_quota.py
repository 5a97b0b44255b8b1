"""Stack holds within the tenant's Nova quota, in the real nova (its
compute API answering ``GET /os-quota-sets/{project}/detail`` to the
policy API's ``[nova]`` client) and the real Placement, both ways Nova
counts usage:

* from its databases (the default): holds are in no usage, so the policy
  API adds what the project's decisions hold;
* from Placement (``[quota] count_usage_from_placement = True``, and the
  policy API's ``nova_counts_usage_from_placement``): Nova's usage of
  cores and ram has the holds in it already, and they are not counted
  twice; instances are counted from Nova's records in both.

A project whose quota is below what it asks is refused with 403 "Quota
exceeded for <resource>", as Nova refuses a boot, and nothing is held.
"""

from nova_scoped_policies.api import quota
from tests.functional import test_repairs
from tests.functional import test_stack_boots as stack_boots

TINY = {'VCPU': 1, 'MEMORY_MB': 512}


def stack(name: str, count: int) -> dict:
    return {'stack': {'name': name, 'lease_seconds': 600, 'group': {
        'name': 'web', 'policies': ['anti-affinity:host'],
        'servers': {'count': count, 'flavor': {'resources': TINY}}}}}


class QuotaCloud(stack_boots.StackCloud):
    """The policy API reads Nova's quotas with the admin's credentials;
    no test of its own."""

    FLAVOR = 'm1.tiny'
    FROM_PLACEMENT = False
    nova_client = test_repairs.RepairCloud.nova_client

    def setUp(self):
        super().setUp()
        self.flags(count_usage_from_placement=self.FROM_PLACEMENT,
                   group='quota')
        self.conf.set_override('nova_counts_usage_from_placement',
                               self.FROM_PLACEMENT, 'scoped_policies_api')
        self.addCleanup(self.conf.clear_override,
                        'nova_counts_usage_from_placement',
                        'scoped_policies_api')

    def quota(self, **limits):
        self.admin_api.update_quota(limits, project_id=self.project)

    def in_use(self, resource: str) -> int:
        return self.admin_api.get_quota_detail(self.project)[resource][
            'in_use']

    def refused(self, document: dict, why: str) -> None:
        """A decision over quota: 403 in Nova's words; nothing held in
        Placement, nothing recorded."""
        held, stacks = self.held(), self.stacks()
        error = self.call('POST', '/stacks', document, expect=403)[
            'errors'][0]
        self.assertEqual(why, error['detail'])
        self.assertEqual(quota.ERROR_CODE, error['code'])
        self.assertEqual(held, self.held())
        self.assertEqual(stacks, self.stacks())

    def stacks(self):
        """The project's decisions: id, status, each server's state."""
        return [(s['id'], s['status'], sorted(
            (n, v['state']) for n, v in s['servers'].items()))
            for s in self.call('GET', '/stacks')['stacks']]

    def decide(self, document: dict) -> dict:
        return self.call('POST', '/stacks', document, expect=201)['stack']


class LegacyCountingTest(QuotaCloud):
    """Nova counts from its databases: holds are in no Nova usage."""

    def test_holds_count_against_the_quota(self):
        self.quota(cores=3, instances=10)
        first = self.decide(stack('a', 2))
        self.assertEqual(2, self.held())
        self.assertEqual(0, self.in_use('cores'))   # Nova does not see them
        self.refused(stack('b', 2), 'Quota exceeded for cores: Requested '
                     '2, but already used 2 of 3 cores (2 held by stack '
                     'decisions)')
        # a server booted beside the stack counts too
        self.boot({}, name='beside')
        self.assertEqual(1, self.in_use('cores'))
        self.refused(stack('c', 1), 'Quota exceeded for cores: Requested '
                     '1, but already used 3 of 3 cores (2 held by stack '
                     'decisions)')
        # what is held still fits: the lease is renewed
        action = f'/stacks/{first["id"]}/action'
        renewed = self.call('POST', action, {'renew': None})['stack']
        # the quota lowered below it: no renewal; the lease runs out
        self.quota(cores=2)
        error = self.call('POST', action, {'renew': None}, expect=403)[
            'errors'][0]
        self.assertEqual(
            'Quota exceeded for cores: the stack holds 2, but the project '
            'already uses 1 of 2 cores: renewing would hold more than it '
            'may boot', error['detail'])
        self.assertEqual(renewed['expires_at'], self.call(
            'GET', f'/stacks/{first["id"]}')['stack']['expires_at'])


class PlacementCountingTest(QuotaCloud):
    """Nova counts cores and ram from Placement: the holds are in its
    usage, and are not counted twice."""

    FROM_PLACEMENT = True

    def test_holds_are_counted_once(self):
        self.quota(cores=3, instances=10)
        self.decide(stack('a', 2))
        self.assertEqual(2, self.in_use('cores'))   # Nova counts the holds
        # 2 + 1 = 3: fits (counted twice it would be 5)
        self.decide(stack('b', 1))
        self.assertEqual(3, self.held())
        # Nova's usage: 3, every one of them held
        self.refused(stack('c', 1), 'Quota exceeded for cores: Requested '
                     '1, but already used 3 of 3 cores (3 held by stack '
                     'decisions)')

    def test_instances_count_the_held_servers(self):
        # Nova counts instances from its records, never the holds
        self.quota(cores=20, instances=3)
        self.decide(stack('a', 3))
        self.assertEqual(0, self.in_use('instances'))
        self.refused(stack('b', 1), 'Quota exceeded for instances: '
                     'Requested 1, but already used 3 of 3 instances (3 '
                     'held by stack decisions)')
