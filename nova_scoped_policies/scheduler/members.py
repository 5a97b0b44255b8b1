"""Where a group's members run: one query per cell per request."""

import typing

from nova import context as nova_context
from nova import objects


class MemberLookupError(Exception):
    """Some cell did not answer, so the member list is incomplete."""


class NovaMemberLocator:
    """Finds the host of every member of a server group in nova's cells.

    One ``InstanceList`` query per cell (not per host), in parallel, as
    nova's own API does for cross-cell listings.
    """

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


class StaticMemberLocator:
    """Members' hosts from a mapping (simulations, benchmarks, tests).

    :param hosts: member uuid -> host; kept and read live.
    """

    def __init__(self, hosts: typing.Optional[
            typing.Dict[str, typing.Optional[str]]] = None) -> None:
        self.hosts = hosts if hosts is not None else {}

    def locate(self, context, member_uuids: typing.Collection[str]
               ) -> typing.Dict[str, typing.Optional[str]]:
        get = self.hosts.get
        return {u: get(u) for u in member_uuids}
