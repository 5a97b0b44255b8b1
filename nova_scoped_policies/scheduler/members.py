"""Where a group's members run: one query per cell per request, plus
Placement for the members that have no host yet.

A member scheduled by another request (or another scheduler) has no
``instance.host`` until its compute node claims it, and before that not even
an instance record in its cell: only a build request and the allocation the
scheduler claimed in Placement. :class:`InFlightMemberLocator` reads those
allocations (one ``GET /allocations/{member}`` per unplaced member, never a
call per host), so members in flight count as soon as their claim exists.
"""

import threading
import time
import typing

from keystoneauth1 import exceptions as ks_exc
from oslo_log import log as logging

from nova import context as nova_context
from nova import exception
from nova import objects

LOG = logging.getLogger(__name__)


class MemberLookupError(Exception):
    """A cell or Placement did not answer, so where the members are is
    known only in part.

    :param partial: member uuid -> host for what is known, the members
        whose claim could not be read mapping to None; None when a cell
        failed and nothing is known.
    """

    def __init__(self, message: str, partial: typing.Optional[
            typing.Dict[str, typing.Optional[str]]] = None) -> None:
        super().__init__(message)
        self.partial = partial


class NovaMemberLocator:
    """Finds the host of every member of a server group in nova's cells.

    One ``InstanceList`` query per cell (not per host), in parallel, as
    nova's own API does for cross-cell listings.
    """

    def current_members(self, context: nova_context.RequestContext,
                        group_uuid: str) -> typing.List[str]:
        """The group's members as the API database lists them now (the
        RequestSpec carries the conductor's older snapshot).

        :param context: an admin (elevated) request context.
        :param group_uuid: the server group.
        """
        try:
            group = objects.InstanceGroup.get_by_uuid(context, group_uuid)
        except exception.InstanceGroupNotFound:
            return []
        return list(group.members or [])

    def locate(self, context: nova_context.RequestContext,
               member_uuids: typing.Collection[str]
               ) -> typing.Dict[str, typing.Optional[str]]:
        """Return member uuid -> host (None while not placed).

        :param context: an admin (elevated) request context.
        :param member_uuids: the group's members.
        :raises MemberLookupError: a cell failed or timed out; hard policies
            cannot be enforced on a partial member list.
        """
        if not member_uuids:
            return {}
        filters = {'uuid': list(member_uuids), 'deleted': False}
        results = nova_context.scatter_gather_skip_cell0(
            context, objects.InstanceList.get_by_filters, filters,
            expected_attrs=[])
        hosts: typing.Dict[str, typing.Optional[str]] = {}
        for cell_uuid, result in results.items():
            if nova_context.is_cell_failure_sentinel(result):
                raise MemberLookupError(
                    f'cell {cell_uuid} did not return the group members')
            for instance in result:
                hosts[instance.uuid] = instance.host
        return hosts

    def busy(self, context: nova_context.RequestContext,
             instance_uuids: typing.Collection[str]) -> typing.Set[str]:
        """The instances with a task in progress (a move among them): one
        query per cell.

        :raises MemberLookupError: a cell failed or timed out.
        """
        if not instance_uuids:
            return set()
        filters = {'uuid': list(instance_uuids), 'deleted': False}
        results = nova_context.scatter_gather_skip_cell0(
            context, objects.InstanceList.get_by_filters, filters,
            expected_attrs=[])
        found: typing.Set[str] = set()
        for cell_uuid, result in results.items():
            if nova_context.is_cell_failure_sentinel(result):
                raise MemberLookupError(
                    f'cell {cell_uuid} did not return the servers')
            found.update(i.uuid for i in result if i.task_state)
        return found

    def instance_alive(self, context: nova_context.RequestContext,
                       instance_uuid: str) -> bool:
        """The instance exists and may still run: scheduled or building
        (no cell yet), or in its cell, neither deleted nor in ERROR.

        :param context: an admin (elevated) request context.
        """
        found = _in_cell(context, instance_uuid)
        if found is _NO_CELL:
            try:
                objects.BuildRequest.get_by_instance_uuid(context,
                                                          instance_uuid)
            except exception.BuildRequestNotFound:
                return False
            return True
        return found is not None and found.vm_state != 'error'

    def instance_host(self, context: nova_context.RequestContext,
                      instance_uuid: str) -> typing.Optional[str]:
        """The host an instance runs on in its cell (None for an initial
        boot: scheduled before the instance exists in a cell, or found
        with no host on a reschedule, nova clearing it after a failed
        build). A move, a resize or an evacuation has one.

        :param context: an admin (elevated) request context.
        """
        found = _in_cell(context, instance_uuid)
        return None if found in (None, _NO_CELL) else found.host


_NO_CELL = object()
"""An instance mapped to no cell yet: being scheduled."""


def _in_cell(context: nova_context.RequestContext, instance_uuid: str):
    """The instance in its cell (not deleted), :data:`_NO_CELL` while it
    has none, or None when there is no such instance."""
    try:
        mapping = objects.InstanceMapping.get_by_instance_uuid(
            context, instance_uuid)
    except exception.InstanceMappingNotFound:
        return None
    if mapping.cell_mapping is None:
        return _NO_CELL
    with nova_context.target_cell(context, mapping.cell_mapping) as cctxt:
        try:
            return objects.Instance.get_by_uuid(cctxt, instance_uuid,
                                                expected_attrs=[])
        except exception.InstanceNotFound:
            return None


class InFlightMemberLocator:
    """Members' hosts from the cells, and from Placement for the members
    whose host is not set yet.

    After Placement failed to answer, it is left alone for
    ``retry_interval()`` seconds (a circuit breaker): lookups fail at once
    with what the cells know, and the outage is logged once when it starts
    and once when it ends.

    :param cells: the locator of placed members (default: nova's cells).
    :param placement: returns nova's Placement report client (read once).
    :param retry_interval: returns the seconds to leave Placement alone
        after a failure (0: ask at every lookup).
    """

    def __init__(self, cells=None, placement=None,
                 retry_interval: typing.Callable[[], float] = lambda: 0.0
                 ) -> None:
        self.cells = cells or NovaMemberLocator()
        self._placement = placement
        self._retry_interval = retry_interval
        self._client = None
        self._hosts: typing.Dict[str, str] = {}
        self._lock = threading.Lock()
        self._failing = False
        self._open_until = 0.0

    def current_members(self, context, group_uuid: str) -> typing.List[str]:
        return self.cells.current_members(context, group_uuid)

    def instance_host(self, context, instance_uuid: str
                      ) -> typing.Optional[str]:
        """See :meth:`NovaMemberLocator.instance_host` (cells only: an
        instance's claim alone does not make it placed)."""
        return self.cells.instance_host(context, instance_uuid)

    def instance_alive(self, context, instance_uuid: str) -> bool:
        """See :meth:`NovaMemberLocator.instance_alive`."""
        return self.cells.instance_alive(context, instance_uuid)

    @property
    def client(self):
        if self._client is None:
            if self._placement is not None:
                self._client = self._placement()
            else:
                from nova.scheduler.client import report
                self._client = report.report_client_singleton()
        return self._client

    def locate(self, context: nova_context.RequestContext,
               member_uuids: typing.Collection[str]
               ) -> typing.Dict[str, typing.Optional[str]]:
        """Return member uuid -> host (None: no host and no claim).

        :raises MemberLookupError: a cell or Placement did not answer.
        """
        hosts = self.cells.locate(context, member_uuids)
        unplaced = [u for u in member_uuids if hosts.get(u) is None]
        if not unplaced:
            return hosts
        partial = dict(hosts, **{u: None for u in unplaced})
        with self._lock:
            wait = self._open_until - time.monotonic()
        if wait > 0:
            raise MemberLookupError(
                f'Placement did not answer a moment ago; the claims of the '
                f'members in flight are read again in {wait:.0f} s',
                partial)
        providers: typing.Dict[str, str] = {}
        for uuid in unplaced:
            try:
                allocs = self.client.get_allocs_for_consumer(context, uuid)
            except (ks_exc.ClientException,
                    exception.ConsumerAllocationRetrievalFailed) as exc:
                self._opened(exc)
                raise MemberLookupError(
                    f'Placement did not return the claims of the group '
                    f'members: {exc}', partial) from exc
            for rp_uuid in (allocs or {}).get('allocations') or {}:
                providers.setdefault(uuid, rp_uuid)
        self._closed()
        names = self._provider_hosts(context, set(providers.values()))
        for uuid in unplaced:
            rp_uuid = providers.get(uuid)
            hosts[uuid] = names.get(rp_uuid) if rp_uuid else None
        return hosts

    def claims(self, context: nova_context.RequestContext,
               instance_uuids: typing.Collection[str]
               ) -> typing.Dict[str, typing.Set[str]]:
        """instance uuid -> the hosts its own allocations are on in
        Placement, for the instances with a task in progress (others
        are where their host says). During a move the allocations name
        the destination before the instance's host changes (a
        migration's allocations on the source belong to the migration;
        an evacuation's instance holds both).

        :raises MemberLookupError: a cell or Placement did not answer.
        """
        providers: typing.Dict[str, typing.Set[str]] = {}
        for uuid in sorted(self.cells.busy(context, instance_uuids)):
            try:
                allocs = self.client.get_allocs_for_consumer(context, uuid)
            except (ks_exc.ClientException,
                    exception.ConsumerAllocationRetrievalFailed) as exc:
                raise MemberLookupError(
                    f'Placement did not return the claims of moving '
                    f'servers: {exc}') from exc
            providers[uuid] = set((allocs or {}).get('allocations') or ())
        names = self._provider_hosts(
            context, set().union(*providers.values()) if providers
            else set())
        return {uuid: {names[rp] for rp in rps if rp in names}
                for uuid, rps in providers.items()}

    def hosts_with_trait(self, context: nova_context.RequestContext,
                         trait: str) -> typing.Set[str]:
        """The hosts whose compute node provider carries ``trait`` in
        Placement (``GET /resource_providers?required=``, 1.18).

        :raises MemberLookupError: Placement or a cell did not answer.
        """
        try:
            resp = self.client.get(
                f'/resource_providers?required={trait}', version='1.18',
                global_request_id=context.global_id)
        except ks_exc.ClientException as exc:
            raise MemberLookupError(
                f'Placement did not list the providers with {trait}: '
                f'{exc}') from exc
        if resp is None or resp.status_code != 200:
            raise MemberLookupError(
                f'Placement answered {getattr(resp, "status_code", None)} '
                f'when asked for the providers with {trait}')
        uuids = {rp['uuid']
                 for rp in resp.json().get('resource_providers') or ()}
        return set(self._provider_hosts(context, uuids).values())

    def _opened(self, exc: Exception) -> None:
        interval = self._retry_interval()
        with self._lock:
            self._open_until = time.monotonic() + interval
            first, self._failing = not self._failing, True
        if first:
            LOG.error('Scoped policies: Placement did not return the claims '
                      'of group members in flight: %s. Boots into groups '
                      'with hard scoped policies fail closed, soft ones are '
                      'decided without those members; Placement is asked '
                      'again in %g s.', exc, interval)

    def _closed(self) -> None:
        with self._lock:
            recovered, self._failing = self._failing, False
        if recovered:
            LOG.info('Scoped policies: Placement returns the claims of '
                     'group members again.')

    def _provider_hosts(self, context, rp_uuids) -> typing.Dict[str, str]:
        """Compute node (root provider) uuid -> host; cached, since a
        compute node's uuid never moves to another host."""
        with self._lock:
            missing = [u for u in rp_uuids if u not in self._hosts]
        if missing:
            results = nova_context.scatter_gather_skip_cell0(
                context, objects.ComputeNodeList.get_all_by_uuids, missing)
            found = {}
            for cell_uuid, result in results.items():
                if nova_context.is_cell_failure_sentinel(result):
                    raise MemberLookupError(
                        f'cell {cell_uuid} did not return compute nodes')
                for node in result:
                    found[node.uuid] = node.host
            with self._lock:
                self._hosts.update(found)
        with self._lock:
            return {u: self._hosts[u] for u in rp_uuids if u in self._hosts}


class StaticMemberLocator:
    """Members' hosts from a mapping (simulations, benchmarks, tests).

    :param hosts: member uuid -> host; kept and read live.
    :param traits: host -> its traits in Placement (none by default: a
        simulation's topology knows its hosts' traits already).
    """

    def __init__(self, hosts: typing.Optional[
            typing.Dict[str, typing.Optional[str]]] = None,
                 traits: typing.Optional[typing.Mapping[
                     str, typing.Iterable[str]]] = None) -> None:
        self.hosts = hosts if hosts is not None else {}
        self.traits = traits if traits is not None else {}

    def hosts_with_trait(self, context, trait: str) -> typing.Set[str]:
        return {h for h, found in self.traits.items() if trait in found}

    def current_members(self, context, group_uuid: str) -> typing.List[str]:
        """None beyond the RequestSpec's."""
        return []

    def instance_host(self, context, instance_uuid: str
                      ) -> typing.Optional[str]:
        return self.hosts.get(instance_uuid)

    def instance_alive(self, context, instance_uuid: str) -> bool:
        """A simulated instance lives while it has a host."""
        return bool(self.hosts.get(instance_uuid))

    def claims(self, context, instance_uuids: typing.Collection[str]
               ) -> typing.Dict[str, typing.Set[str]]:
        """A simulated move is done at once: the host is the claim."""
        get = self.hosts.get
        return {u: {get(u)} if get(u) else set() for u in instance_uuids}

    def locate(self, context, member_uuids: typing.Collection[str]
               ) -> typing.Dict[str, typing.Optional[str]]:
        get = self.hosts.get
        return {u: get(u) for u in member_uuids}
