"""Where the scheduler plugins read the policy store.

A driver (stevedore namespace ``nova_scoped_policies.scheduler.stores``,
chosen by ``[scoped_policies] store_driver``) answers two questions:
which scopes exist and what a group's stored policies are. ``sql`` reads
the database, ``http`` the policy API. :class:`CachedStore` keeps the
answers for ``store_cache_ttl`` seconds and remembers the last answer to
tell hard from soft policies while the store is unreachable. A failed call
opens a circuit breaker: for ``store_retry_interval`` seconds no request
waits for the store again (each answers at once from what is known), and
the outage is logged once when it starts and once when it ends.
"""

import abc
import threading
import time
import typing

from oslo_log import log as logging
from stevedore import driver as stevedore_driver

from nova_scoped_policies.db import records

LOG = logging.getLogger(__name__)
NAMESPACE = 'nova_scoped_policies.scheduler.stores'


class StoreUnavailable(Exception):
    """The store did not answer; the message says why."""


class PlanServer(typing.NamedTuple):
    """One server of a stack decision, as the scheduler needs it.

    :param host: the decided compute host.
    :param state: held, booted or released.
    :param instance_uuid: the instance booted for it, once one is.
    """

    host: str
    state: str
    instance_uuid: typing.Optional[str] = None


class StackPlan(typing.NamedTuple):
    """A stack decision, as the scheduler reads it: what to pin a boot to
    and, for the stack's whole life, which policies its servers keep.

    :param id: the decision id (the ``scoped_plan`` hint).
    :param project_id: whose decision it is.
    :param document: the stack document as the tenant gave it.
    :param servers: server name -> :class:`PlanServer`.
    """

    id: str
    project_id: str
    document: typing.Mapping[str, typing.Any]
    servers: typing.Mapping[str, PlanServer]


class PolicyStoreDriver(abc.ABC):
    """The contract of a store driver."""

    @abc.abstractmethod
    def scopes(self) -> typing.List[records.ScopeRecord]:
        """Every stored scope, its aggregates by real uuid.

        :raises StoreUnavailable: the store did not answer.
        """

    @abc.abstractmethod
    def group(self, uuid: str) -> typing.Optional[records.GroupRecord]:
        """A group's stored policies, or None when it has none.

        :param uuid: the Nova server group uuid.
        :raises StoreUnavailable: the store did not answer.
        """

    @abc.abstractmethod
    def groups(self) -> typing.List[records.GroupRecord]:
        """Every stored group (for the status check, not per boot).

        :raises StoreUnavailable: the store did not answer.
        """

    def stack_plan(self, plan_id: str) -> typing.Optional[StackPlan]:
        """A stack decision, or None when there is none (deleted).

        :raises StoreUnavailable: the store did not answer.
        """
        raise StoreUnavailable(f'{type(self).__name__} reads no stack '
                               'decisions')

    def boot_member(self, plan_id: str, name: str,
                    instance_uuid: typing.Optional[str] = None) -> None:
        """Give the member's hold back in Placement, mark it booted and
        remember its instance, as the scheduler places it on its decided
        host.

        :raises StoreUnavailable: the store did not answer.
        """
        raise StoreUnavailable(f'{type(self).__name__} reads no stack '
                               'decisions')


def load_driver(name: str, conf) -> PolicyStoreDriver:
    """The driver registered under ``name``, built with ``conf``.

    :raises ValueError: no driver of that name is installed.
    """
    try:
        return stevedore_driver.DriverManager(
            NAMESPACE, name, invoke_on_load=True,
            invoke_args=(conf,)).driver
    except Exception as exc:  # stevedore raises NoMatches / RuntimeError
        raise ValueError(f'[scoped_policies] store_driver: {name!r}: '
                         f'cannot load it from {NAMESPACE}: {exc}') from exc


_UNKNOWN = object()


class CachedStore:
    """A driver's answers, kept for ``ttl()`` seconds.

    :param driver: the store driver.
    :param ttl: returns the current cache lifetime in seconds.
    :param clock: monotonic clock, replaceable in tests.
    :param retry_interval: returns the seconds the driver is left alone
        after it failed (the circuit breaker; 0, the default, retries at
        every read). The scheduler passes ``store_retry_interval``.
    """

    def __init__(self, driver: PolicyStoreDriver,
                 ttl: typing.Callable[[], int],
                 clock: typing.Callable[[], float] = time.monotonic,
                 retry_interval: typing.Callable[[], float] = lambda: 0.0
                 ) -> None:
        self.driver = driver
        self._ttl = ttl
        self._clock = clock
        self._retry_interval = retry_interval
        # circuit breaker: while open, the driver is not called at all
        self._down_since: typing.Optional[float] = None
        self._down_reason = ''
        self._next_try = 0.0
        self._lock = threading.Lock()
        self._scopes: typing.Optional[typing.Tuple[float, list]] = None
        self._groups: typing.Dict[str, typing.Tuple[float, typing.Any]] = {}

    def _fresh(self, read_at: float) -> bool:
        return self._clock() - read_at < self._ttl()

    def _call(self, method, *args):
        """Call the driver unless the breaker is open; log an outage once
        when it starts and once when it ends, never per request.

        :raises StoreUnavailable: the driver failed now, or within the last
            ``retry_interval`` seconds (then without calling it).
        """
        with self._lock:
            if self._down_since is not None and \
                    self._clock() < self._next_try:
                raise StoreUnavailable(
                    f'{self._down_reason} (not retried before '
                    f'{self._next_try - self._clock():.0f} s)')
        try:
            result = method(*args)
        except StoreUnavailable as exc:
            with self._lock:
                first = self._down_since is None
                if first:
                    self._down_since = self._clock()
                self._down_reason = str(exc)
                self._next_try = self._clock() + self._retry_interval()
            if first:
                LOG.error('Policy store unreachable; retried at most every '
                          '%(n)g s until it answers: %(exc)s',
                          {'n': self._retry_interval(), 'exc': exc})
            raise
        with self._lock:
            down_since, self._down_since = self._down_since, None
        if down_since is not None:
            LOG.warning('Policy store reachable again after %.0f s',
                        self._clock() - down_since)
        return result

    def scopes(self) -> typing.List[records.ScopeRecord]:
        """The stored scopes; the last copy (or none) when unreachable."""
        with self._lock:
            if self._scopes is not None and self._fresh(self._scopes[0]):
                return self._scopes[1]
        try:
            scopes = self._call(self.driver.scopes)
        except StoreUnavailable as exc:
            last = self._scopes[1] if self._scopes else []
            LOG.debug('Policy store unreachable, using the %d scopes '
                      'read last: %s', len(last), exc)
            return last
        with self._lock:
            self._scopes = (self._clock(), scopes)
        return scopes

    def forget(self) -> None:
        """Drop every cached answer: the next reads go to the driver.

        For a process that writes the store itself (the simulator) and
        must see its writes at once; the scheduler relies on the TTL.
        """
        with self._lock:
            self._scopes = None
            self._groups.clear()

    def remember(self, group: records.GroupRecord) -> None:
        """Keep ``group`` as the driver's answer for it, as a read would.

        For a process that wrote the group itself (the simulator), which
        has the record the write returned: one read saved.
        """
        with self._lock:
            self._groups[group.uuid] = (self._clock(), group)

    def group(self, uuid: str) -> typing.Optional[records.GroupRecord]:
        """A group's stored policies.

        :raises StoreUnavailable: the store did not answer; the exception's
            ``last_known`` is the last answer (a group record or None), or
            absent when the group was never read.
        """
        with self._lock:
            cached = self._groups.get(uuid)
            if cached is not None and self._fresh(cached[0]):
                return cached[1]
        try:
            found = self._call(self.driver.group, uuid)
        except StoreUnavailable as exc:
            exc.last_known = cached[1] if cached is not None else _UNKNOWN
            raise
        with self._lock:
            self._groups[uuid] = (self._clock(), found)
        return found

    def stack_plan(self, plan_id: str) -> typing.Optional[StackPlan]:
        """Never cached: a decision's servers change as they boot."""
        return self._call(self.driver.stack_plan, plan_id)

    def boot_member(self, plan_id: str, name: str,
                    instance_uuid: typing.Optional[str] = None) -> None:
        return self._call(self.driver.boot_member, plan_id, name,
                          instance_uuid)


def known(exc: StoreUnavailable) -> bool:
    """Whether an unavailable store's group was read before."""
    return getattr(exc, 'last_known', _UNKNOWN) is not _UNKNOWN
