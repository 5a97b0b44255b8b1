"""The topologies the policy API reads: the stored scopes, with the hosts
that matter to a request (from Placement)."""

import typing

from nova_scoped_policies.api import hosts as hosts_mod
from nova_scoped_policies import topology as topo


def stored(store, hosts: typing.Mapping[str, typing.Iterable[str]] = {}
           ) -> topo.Topology:
    """The scopes of the policy store as a Topology.

    :param store: the policy store (``db.api.PolicyStore``).
    :param hosts: aggregate -> the hosts of it that matter (audits).
    """
    return topo.from_scope_records(store.list_scopes(), hosts)


def hosts_by_aggregate(aggregates: typing.Mapping[str, typing.Iterable[str]]
                       ) -> typing.Dict[str, typing.Set[str]]:
    """host -> its aggregates, turned into aggregate -> its hosts.

    :param aggregates: host -> the aggregates it is in.
    """
    found: typing.Dict[str, typing.Set[str]] = {}
    for host, among in aggregates.items():
        for aggregate in among:
            found.setdefault(aggregate, set()).add(host)
    return found


def with_hosts(store, placement,
               scopes: typing.Optional[typing.AbstractSet[str]] = None,
               each: typing.Callable = map) -> topo.Topology:
    """The stored scopes with every host of their aggregates (one ``GET
    /resource_providers?member_of=in:AGG`` per aggregate).

    :param store: the policy store.
    :param placement: the Placement client.
    :param scopes: the scopes whose hosts to read (default: all).
    :param each: how the aggregates' reads are made: ``map`` (one at a
        time) or a thread pool's ``map``.
    :raises nova_scoped_policies.placement.client.PlacementError:
    """
    records = store.list_scopes()
    aggregates = sorted({aggregate for record in records
                         if scopes is None or record.name in scopes
                         for aggregate in record.aggregates})
    by_aggregate = dict(zip(aggregates, each(
        lambda aggregate: hosts_mod.hosts_in(placement, [aggregate]),
        aggregates)))
    return topo.from_scope_records(records, by_aggregate)
