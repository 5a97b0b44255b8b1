"""The quota rule of stack holds (:func:`api.quota.exceeded`), both ways
Nova counts: from its databases (holds in no usage) and from Placement
(cores and ram of the holds already in Nova's usage)."""

import pytest

from nova_scoped_policies.api import quota

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
