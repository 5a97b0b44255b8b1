"""Stack holds within the tenant's Nova quota (``[scoped_policies_api]
check_stack_quota``).

A stack decision holds its servers' resources in Placement under the
tenant's project. Nova counts them only where it counts usage from
Placement (``[quota] count_usage_from_placement`` or unified limits: the
``cores`` and ``ram`` of every allocation of the project, never the
``instances``); with its default counting, holds are in no usage. So at
decide and renew the service reads the project's limits and usage from
Nova (``GET /os-quota-sets/{project}/detail``, the ``[nova]``
credentials) and adds what the project's stack decisions hold where Nova
does not count it (``nova_counts_usage_from_placement``). A stack that
would pass a limit is refused with Nova's own words for a boot over
quota: 403 "Quota exceeded for cores: Requested 4, but already used 8 of
10 cores".

:func:`exceeded` is the pure rule; :func:`check_decision` and
:func:`check_held` are what the ``/stacks`` handler calls.
"""

import dataclasses
import typing

from keystoneauth1 import exceptions as ks_exc
from oslo_log import log as logging
import webob.exc

from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies import errors

LOG = logging.getLogger(__name__)

INSTANCES, CORES, RAM = 'instances', 'cores', 'ram'
RESOURCES = (INSTANCES, CORES, RAM)
"""The Nova quotas a hold uses, in the order they are checked."""
PLACEMENT_COUNTED = (CORES, RAM)
"""What Nova counts from Placement's usages when it counts from
Placement (instances stay counted from its instance records)."""
ERROR_CODE = 'scoped_policies.quota_exceeded'
QUOTA_VERSION = '2.1'


@dataclasses.dataclass(frozen=True)
class Amounts:
    """Instances, cores and ram of some servers."""

    instances: int = 0
    cores: int = 0
    ram: int = 0

    @classmethod
    def of(cls, resources: typing.Iterable[typing.Mapping[str, int]]
           ) -> 'Amounts':
        """What servers of these Placement resources count in Nova's
        quota: one instance each, ``VCPU`` and ``PCPU`` as cores,
        ``MEMORY_MB`` as ram."""
        instances = cores = ram = 0
        for found in resources:
            instances += 1
            cores += found.get('VCPU', 0) + found.get('PCPU', 0)
            ram += found.get('MEMORY_MB', 0)
        return cls(instances, cores, ram)

    def __getitem__(self, resource: str) -> int:
        return getattr(self, resource)

    def __add__(self, other: 'Amounts') -> 'Amounts':
        return Amounts(*(self[r] + other[r] for r in RESOURCES))


@dataclasses.dataclass(frozen=True)
class Quota:
    """One of Nova's quotas of a project.

    :param limit: the limit; negative: unlimited.
    :param used: what Nova counts in use (``in_use`` + ``reserved``).
    """

    limit: int
    used: int


@dataclasses.dataclass(frozen=True)
class Exceeded:
    """The first quota a stack would pass."""

    resource: str
    asked: int
    used: int
    limit: int
    held: int

    def message(self, renewing: bool = False) -> str:
        """Nova's words for a boot over quota; how much of what is used
        stack decisions hold."""
        r = self.resource
        held = f' ({self.held} held by stack decisions)' if self.held else ''
        if renewing:
            return (f'Quota exceeded for {r}: the stack holds {self.asked}, '
                    f'but the project already uses {self.used} of '
                    f'{self.limit} {r}{held}: renewing would hold more than '
                    'it may boot')
        return (f'Quota exceeded for {r}: Requested {self.asked}, but '
                f'already used {self.used} of {self.limit} {r}{held}')


def exceeded(quotas: typing.Mapping[str, Quota], held: Amounts,
             asked: Amounts, from_placement: bool,
             asked_in_use: bool = False) -> typing.Optional[Exceeded]:
    """The first quota ``asked`` would pass, or None.

    :param quotas: resource -> Nova's quota of the project (a resource
        Nova does not name is not limited).
    :param held: what the project's other stack decisions hold.
    :param asked: what the stack holds, or asks to.
    :param from_placement: Nova counts cores and ram from Placement: its
        usage has every hold of the project in it already.
    :param asked_in_use: the stack's own holds exist in Placement (a
        renewal, or the check once held): Nova's usage counted them too.
    """
    for resource in RESOURCES:
        quota = quotas.get(resource)
        if quota is None or quota.limit < 0 or not asked[resource]:
            continue
        used, others = quota.used, held[resource]
        if from_placement and resource in PLACEMENT_COUNTED:
            if asked_in_use:
                used -= asked[resource]
        else:
            used += others
        if used + asked[resource] > quota.limit:
            return Exceeded(resource, asked[resource], used, quota.limit,
                            others)
    return None


def _forbidden(found: Exceeded, renewing: bool = False
               ) -> webob.exc.HTTPForbidden:
    exc = webob.exc.HTTPForbidden(explanation=found.message(renewing))
    exc.error_code = ERROR_CODE
    return exc


_UNCHECKED_SAID = []


def _applies(service) -> bool:
    """Whether quotas are checked: the option is on and ``[nova]``
    configured (said once a process when not)."""
    if not service.conf.scoped_policies_api.check_stack_quota:
        return False
    if service.nova is None:
        if not _UNCHECKED_SAID:
            LOG.warning('Stack holds are not checked against Nova quotas: '
                        '[nova] is not configured ([scoped_policies_api] '
                        'check_stack_quota needs it)')
            _UNCHECKED_SAID.append(True)
        return False
    return True


def read(adapter, project_id: str) -> typing.Dict[str, Quota]:
    """The project's limits and usage of :data:`RESOURCES`, from Nova.

    :param adapter: a keystoneauth1 Adapter of the compute API.
    :raises nova_scoped_policies.errors.Unavailable: Nova did not answer them.
    """
    what = f'the quota of project {project_id} from Nova'
    try:
        resp = adapter.get(
            f'/os-quota-sets/{project_id}/detail', raise_exc=False,
            headers={'OpenStack-API-Version': f'compute {QUOTA_VERSION}'})
    except ks_exc.ClientException as exc:
        raise errors.Unavailable(f'cannot read {what}: {exc}') from exc
    try:
        if resp.status_code != 200:
            raise ValueError(resp.status_code)
        found = resp.json()['quota_set']
        return {r: Quota(int(found[r]['limit']),
                         int(found[r]['in_use']) +
                         int(found[r].get('reserved') or 0))
                for r in RESOURCES if r in found}
    except (ValueError, KeyError, TypeError) as exc:
        raise errors.Unavailable(
            f'cannot read {what}: {str(exc)[:200]}') from exc


def held(store: stack_db.StackStore, project_id: str,
         but: typing.Optional[str] = None) -> Amounts:
    """What the project's stack decisions hold (their servers not yet
    booted nor released), but decision ``but``."""
    return sum((_holding(r) for r in store.list(project_id)
                if r.id != but), Amounts())


def _holding(record: stack_db.StackRecord) -> Amounts:
    return Amounts.of(s.resources for s in record.servers.values()
                      if s.state == stack_db.HELD and s.consumer)


def _exceeded(service, store, project_id: str, asked: Amounts,
              but: typing.Optional[str] = None,
              asked_in_use: bool = False) -> typing.Optional[Exceeded]:
    if not _applies(service) or not any(asked[r] for r in RESOURCES):
        return None
    return exceeded(
        read(service.nova.adapter, project_id),
        held(store, project_id, but), asked,
        service.conf.scoped_policies_api.nova_counts_usage_from_placement,
        asked_in_use)


def check_decision(service, store: stack_db.StackStore, project_id: str,
                   resources: typing.Iterable[typing.Mapping[str, int]]
                   ) -> None:
    """Before a decision: the stack's servers (their Placement
    ``resources``) fit the project's quota with what it uses and holds.

    :raises webob.exc.HTTPForbidden: "Quota exceeded for <resource>".
    :raises nova_scoped_policies.errors.Unavailable: Nova did not answer.
    """
    found = _exceeded(service, store, project_id, Amounts.of(resources))
    if found is not None:
        raise _forbidden(found)


def check_held(service, store: stack_db.StackStore,
               record: stack_db.StackRecord, renewing: bool = False
               ) -> None:
    """What a decision holds fits the project's quota, with what the
    project uses and its other decisions hold: once a decision is held
    (two decisions checked at once may both have passed
    :func:`check_decision`: Nova checks a boot's quota again too), and
    before a lease is extended (the quota may have been lowered, or
    servers booted beside the stack, since it was decided).

    :raises webob.exc.HTTPForbidden: "Quota exceeded for <resource>"; once
        held, the caller gives the holds back.
    :raises nova_scoped_policies.errors.Unavailable: Nova did not answer a
        renewal (once held, the check before the decision stands).
    """
    try:
        found = _exceeded(service, store, record.project_id,
                          _holding(record), but=record.id,
                          asked_in_use=True)
    except errors.Unavailable as exc:
        if renewing:
            raise
        LOG.warning('Stack %s: its quota not checked again once held: %s',
                    record.id, exc)
        return
    if found is not None:
        raise _forbidden(found, renewing)
