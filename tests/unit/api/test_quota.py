"""The quota rule of stack holds (:func:`api.quota.exceeded`), both ways
Nova counts: from its databases (holds in no usage) and from Placement
(cores and ram of the holds already in Nova's usage)."""

import types

import pytest
import webob.exc

from nova_scoped_policies.api import quota
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies import errors

Q = quota.Quota
HOLD = {'VCPU': 2, 'MEMORY_MB': 1024}


def amounts(n, vcpu=2, ram=1024):
    return quota.Amounts.of([{'VCPU': vcpu, 'MEMORY_MB': ram}] * n)


def test_amounts_count_vcpu_and_pcpu_as_cores():
    found = quota.Amounts.of([{'VCPU': 2, 'MEMORY_MB': 512},
                              {'PCPU': 4, 'MEMORY_MB': 256, 'DISK_GB': 9}])
    assert (found.instances, found.cores, found.ram) == (2, 6, 768)
    assert found + found == quota.Amounts(4, 12, 1536)


@pytest.mark.parametrize('from_placement, used, held, asked, over', [
    # legacy counting: the holds are in no usage, they are added
    (False, 4, amounts(2), amounts(1), None),        # 4 + 4 + 2 = 10
    (False, 5, amounts(2), amounts(1), 'cores'),      # 11 > 10
    # counted from Placement: the holds are in Nova's usage already
    (True, 8, amounts(2), amounts(1), None),          # 8 + 2 = 10
    (True, 9, amounts(2), amounts(1), 'cores'),
])
def test_cores(from_placement, used, held, asked, over):
    quotas = {'instances': Q(10, 0), 'cores': Q(10, used),
              'ram': Q(-1, 0)}
    found = quota.exceeded(quotas, held, asked, from_placement)
    assert (found and found.resource) == over


def test_instances_always_count_the_held_servers():
    quotas = {'instances': Q(3, 1), 'cores': Q(-1, 0), 'ram': Q(-1, 0)}
    for from_placement in (False, True):
        found = quota.exceeded(quotas, amounts(2), amounts(1),
                               from_placement)
        assert found.resource == 'instances'
        assert found.message() == ('Quota exceeded for instances: '
                                   'Requested 1, but already used 3 of 3 '
                                   'instances (2 held by stack decisions)')


def test_a_held_stack_is_not_counted_twice_by_placement():
    # renewing a stack of 2 (4 cores) Nova already counts (placement)
    quotas = {'cores': Q(10, 10)}
    assert quota.exceeded(quotas, amounts(0), amounts(2), True,
                          asked_in_use=True) is None
    quotas = {'cores': Q(8, 10)}      # the quota was lowered
    found = quota.exceeded(quotas, amounts(0), amounts(2), True,
                           asked_in_use=True)
    assert (found.resource, found.asked, found.used) == ('cores', 4, 6)
    assert found.message(renewing=True).startswith(
        'Quota exceeded for cores: the stack holds 4, but the project '
        'already uses 6 of 8 cores: renewing would hold')


def test_unlimited_and_unnamed_quotas_never_refuse():
    assert quota.exceeded({'cores': Q(-1, 99)}, amounts(50), amounts(50),
                          False) is None
    assert quota.exceeded({}, amounts(50), amounts(50), False) is None


def test_ram_is_checked_after_instances_and_cores():
    quotas = {'instances': Q(10, 0), 'cores': Q(10, 0), 'ram': Q(2048, 0)}
    found = quota.exceeded(quotas, amounts(1), amounts(2), False)
    assert (found.resource, found.asked, found.used, found.held) == (
        'ram', 2048, 1024, 1024)


class _Resp:
    def __init__(self, status, body=None):
        self.status_code, self._body = status, body

    def json(self):
        return self._body


class _Adapter:
    """Nova's compute API: the project's quota detail, or a failure."""

    def __init__(self, quota_set=None, status=200):
        self.quota_set, self.status = quota_set, status

    def get(self, url, **kwargs):
        return _Resp(self.status, {'quota_set': self.quota_set})


def _service(adapter, from_placement=False):
    options = types.SimpleNamespace(
        check_stack_quota=True,
        nova_counts_usage_from_placement=from_placement)
    return types.SimpleNamespace(
        conf=types.SimpleNamespace(scoped_policies_api=options),
        nova=types.SimpleNamespace(adapter=adapter))


def _record(id, servers):
    return stack_db.StackRecord(
        id, 'app', 'p', 'u', stack_db.RESERVED, 600, None, 0.1, {}, {
            f's{i}': stack_db.StackServer(f's{i}', 'h1', 'rp', HOLD,
                                          f'c-{id}-{i}')
            for i in range(servers)})


class _Store:
    def __init__(self, *records):
        self.records = records

    def list(self, project_id):
        return [r for r in self.records if r.project_id == project_id]


def _limits(cores):
    return {'instances': {'limit': 10, 'in_use': 0, 'reserved': 0},
            'cores': {'limit': cores, 'in_use': 0, 'reserved': 0},
            'ram': {'limit': -1, 'in_use': 0, 'reserved': 0}}


def test_two_decisions_checked_at_once_are_checked_again_once_held():
    # each was checked before either held (4 cores of 6); held together:
    # 8 of 6
    mine, other = _record('a', 2), _record('b', 2)
    service = _service(_Adapter(_limits(6)))
    quota.check_decision(service, _Store(), 'p', [HOLD, HOLD])
    with pytest.raises(webob.exc.HTTPForbidden) as caught:
        quota.check_held(service, _Store(mine, other), mine)
    assert caught.value.explanation == (
        'Quota exceeded for cores: Requested 4, but already used 4 of 6 '
        'cores (4 held by stack decisions)')
    assert caught.value.error_code == quota.ERROR_CODE


def test_nova_silent_once_held_keeps_the_decision_but_no_renewal():
    record = _record('a', 1)
    service = _service(_Adapter(status=503))
    quota.check_held(service, _Store(record), record)     # no error
    with pytest.raises(errors.Unavailable) as caught:
        quota.check_held(service, _Store(record), record, renewing=True)
    assert 'cannot read the quota of project p from Nova' in \
        str(caught.value)
    with pytest.raises(errors.Unavailable):
        quota.check_decision(service, _Store(), 'p', [HOLD])


def test_nothing_is_checked_without_nova_or_when_turned_off():
    service = _service(None)
    service.nova = None
    quota.check_decision(service, _Store(), 'p', [HOLD] * 99)
    service = _service(_Adapter(_limits(1)))
    service.conf.scoped_policies_api.check_stack_quota = False
    quota.check_decision(service, _Store(), 'p', [HOLD] * 99)
