"""What the service asks Placement: hosts of aggregates, member placements.

A host is a root resource provider; its name is the compute node's
hypervisor hostname, which is the nova-compute host name for every virt
driver but ironic.
"""

import dataclasses
import typing

import webob.exc

from nova_scoped_policies import errors
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.stacks import service as stack_service

# Each uuid adds 37 bytes to the URL; stay well below 8 KiB request lines.
_CHUNK = 100


def hosts_in(placement: pc.PlacementClient,
             aggregates: typing.Iterable[str]) -> typing.Set[str]:
    """Names of the hosts in any of ``aggregates``.

    :raises nova_scoped_policies.errors.Unavailable: Placement failed.
    """
    aggregates = sorted(aggregates)
    found: typing.Set[str] = set()
    try:
        for i in range(0, len(aggregates), _CHUNK):
            chunk = ','.join(aggregates[i:i + _CHUNK])
            found.update(p['name'] for p in placement.list_providers(
                member_of=[f'in:{chunk}']))
    except pc.PlacementError as exc:
        raise errors.Unavailable.placement(
            'read the hosts of the aggregates', exc)
    return found


def hosts_in_two_domains(placement: pc.PlacementClient,
                         existing: typing.Iterable[str],
                         new: typing.Sequence[str],
                         nova=None) -> typing.List[str]:
    """Hosts that adding ``new`` aggregates to a scope whose domains are
    ``existing`` would put in two domains of the scope.

    With ``[nova]`` configured, one call lists every aggregate's hosts
    (scopes of thousands of aggregates); otherwise Placement is asked once
    for the existing domains and once per new aggregate.

    :param placement: the Placement client.
    :param existing: the scope's aggregates now.
    :param new: the aggregates to add.
    :param nova: the Nova client, or None.
    """
    if nova is not None:
        members = nova.aggregate_hosts()

        def hosts_of(aggregates):
            return set().union(*(members.get(a, ()) for a in aggregates))
    else:
        def hosts_of(aggregates):
            return hosts_in(placement, aggregates)
    seen = hosts_of(list(existing)) if existing else set()
    twice: typing.Set[str] = set()
    for aggregate in new:
        hosts = hosts_of([aggregate])
        twice |= hosts & seen
        seen |= hosts
    return sorted(twice)


@dataclasses.dataclass
class Placements:
    """Where members run, as Placement knows it.

    :param hosts: member -> host name (None: no allocations).
    :param aggregates: host name -> its aggregates.
    """

    hosts: typing.Dict[str, typing.Optional[str]]
    aggregates: typing.Dict[str, typing.FrozenSet[str]]


def member_placements(placement: pc.PlacementClient,
                      members: typing.Iterable[str]) -> Placements:
    """Member -> host from their allocations (consumer = instance uuid),
    and the aggregates of those hosts. One provider read per distinct host.

    :raises nova_scoped_policies.errors.Unavailable: Placement failed.
    """
    hosts: typing.Dict[str, typing.Optional[str]] = {}
    roots: typing.Dict[str, typing.Tuple[str, str]] = {}
    aggregates: typing.Dict[str, typing.FrozenSet[str]] = {}
    try:
        for member in members:
            providers = placement.get_allocations(member)['allocations']
            hosts[member] = None
            for rp_uuid in sorted(providers):
                if rp_uuid not in roots:
                    rp = placement.get_provider(rp_uuid)
                    root = rp.get('root_provider_uuid') or rp_uuid
                    if root != rp_uuid:
                        rp = placement.get_provider(root)
                    roots[rp_uuid] = (root, rp['name'])
                root, name = roots[rp_uuid]
                if name not in aggregates:
                    aggregates[name] = frozenset(
                        placement.provider_aggregates(root))
                hosts[member] = name
                break
    except pc.PlacementError as exc:
        raise errors.Unavailable.placement('read where the members run', exc)
    return Placements(hosts, aggregates)


def check_owner(placement: pc.PlacementClient, instance: str,
                project_id: str, nova=None) -> None:
    """An instance joins only a group of its own project.

    With ``[nova]`` configured, Nova says whose the server is (a server
    Nova does not know is refused). Otherwise Placement's consumer record
    does (its allocations carry the project, microversion 1.12); an
    instance without allocations has nowhere to reveal and may join.
    Another project's instance is answered exactly as a missing one (404),
    so ids cannot be probed.

    :raises webob.exc.HTTPNotFound: the instance is another project's.
    :raises nova_scoped_policies.errors.Unavailable: Nova or Placement failed.
    """
    if nova is not None:
        if nova.server_project(instance) != project_id:
            raise webob.exc.HTTPNotFound(
                explanation=f'instance {instance} not found')
        return
    try:
        found = placement.request('GET', f'/allocations/{instance}',
                                  version='1.12').json()
    except pc.PlacementError as exc:
        raise errors.Unavailable.placement('read whose the instance is', exc)
    owner = found.get('project_id')
    if found.get('allocations') and owner != project_id:
        raise webob.exc.HTTPNotFound(
            explanation=f'instance {instance} not found')


def inventories(placement: pc.PlacementClient, rp: str
                ) -> typing.Dict[str, dict]:
    """A provider's inventories: resource class -> ``total``,
    ``reserved``, ``allocation_ratio``...

    :raises nova_scoped_policies.placement.client.PlacementError:
    """
    return placement.request(
        'GET', f'/resource_providers/{rp}/inventories').json()[
            'inventories']


def traits(placement: pc.PlacementClient, rp: str) -> typing.List[str]:
    """A provider's traits.

    :raises nova_scoped_policies.placement.client.PlacementError:
    """
    return placement.request(
        'GET', f'/resource_providers/{rp}/traits').json()['traits']


CANDIDATES_VERSION = '1.29'   # summaries with traits and root providers


def fitting(placement: pc.PlacementClient,
            resources: typing.Mapping[str, int],
            required: typing.Sequence[str] = ()
            ) -> typing.Dict[str, typing.Tuple[typing.Dict[str, int],
                                               typing.FrozenSet[str]]]:
    """Every compute node that fits ``resources`` (and has the
    ``required`` traits; ``!T`` forbids T), from one ``GET
    /allocation_candidates``: root provider uuid -> (its free capacity,
    Placement's ``(total - reserved) x allocation ratio - used``; its
    traits).

    :raises nova_scoped_policies.placement.client.PlacementError:
    """
    params = [('resources', ','.join(
        f'{rc}:{n}' for rc, n in sorted(resources.items()) if n))]
    if required:
        params.append(('required', ','.join(required)))
    query = '&'.join(f'{k}={v}' for k, v in params)
    data = placement.request('GET', f'/allocation_candidates?{query}',
                             version=CANDIDATES_VERSION).json()
    found = {}
    for rp, summary in data['provider_summaries'].items():
        if summary.get('root_provider_uuid', rp) != rp:
            continue
        # the summaries' capacity is (total - reserved) x ratio
        found[rp] = ({rc: stack_service.free_capacity(r['capacity'],
                                                      r['used'])
                      for rc, r in summary['resources'].items()},
                     frozenset(summary.get('traits', ())))
    return found
