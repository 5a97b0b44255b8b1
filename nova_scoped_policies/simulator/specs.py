"""What nova keeps of a server's boot request, and the RequestSpec of each
scheduling request made from it: the boot, then every move.

A :class:`Launch` is the makings of a RequestSpec (flavor, image, group,
project, scheduler hints), kept with each server as nova keeps the
instance's RequestSpec for its whole life. :func:`request_spec` builds
the RequestSpec as nova's API does for a boot; a move starts from the same
one (:func:`for_move`) with the fields nova's conductor sets: the instance,
one instance, and either ``ignore_hosts`` (a cold migration or an
evacuation: not its own host) or ``requested_destination`` (a move to a
named host, which the filters still check). :class:`Reach` is what nova's
HostManager does with those fields, and with hosts that are down, before
the filters run.
"""

import dataclasses
import types
import typing

from nova import objects
from nova_scoped_policies.simulator import scenario as sc
from nova_scoped_policies.stacks import model as stack_model

USER = 'simulator'
"""The user of every simulated request and allocation."""
FLAVOR_FIELDS = ('VCPU', 'MEMORY_MB', 'DISK_GB')
"""Resource classes a flavor carries in its own fields."""
_EMPTY: typing.Mapping[str, str] = types.MappingProxyType({})
DOWN = 'down (fail_host): never a candidate again'
OWN_HOST = "the server's own host: a move goes elsewhere"
NOT_REQUESTED = 'not the requested host'


@dataclasses.dataclass(frozen=True)
class Launch:
    """A boot request as nova keeps it for its servers' life.

    :param flavor: the flavor's name.
    :param servers: the servers it boots (one instance each).
    :param group: the scenario group they boot into, if any.
    :param project: the tenant.
    :param resources: resource class -> amount, per server.
    :param extra_specs: the flavor's extra specs besides resources.
    :param image_properties: the image's properties.
    :param hints: scheduler hints besides ``group`` (one value each).
    """

    flavor: str
    servers: typing.Tuple[str, ...]
    group: typing.Optional[str]
    project: str
    resources: typing.Mapping[str, int]
    extra_specs: typing.Mapping[str, str] = dataclasses.field(
        default_factory=dict)
    image_properties: typing.Mapping[str, str] = dataclasses.field(
        default_factory=dict)
    hints: typing.Mapping[str, str] = dataclasses.field(
        default_factory=dict)

    @classmethod
    def of_boot(cls, boot: sc.Boot) -> 'Launch':
        """A scenario ``boot``."""
        return cls(boot.name, tuple(boot.servers), boot.group, boot.project,
                   dict(boot.resources), dict(boot.extra_specs),
                   dict(boot.image_properties))

    @classmethod
    def of_stack_server(cls, entry: sc.StackEntry,
                        server: stack_model.Server,
                        decision: typing.Optional[str]) -> 'Launch':
        """One server of a stack decision, booted as the policy service
        tells a tenant to: alone, with the decision's hints (none without
        a decision), its flavor's traits as ``trait:`` extra specs."""
        traits = {f'trait:{t}': 'required' for t in server.flavor.required}
        traits.update({f'trait:{t}': 'forbidden'
                       for t in server.flavor.forbidden})
        return cls(server.group, (server.name,), None, entry.project,
                   {rc: n for rc, n in server.flavor.resources.items()
                    if n},
                   traits, hints={'scoped_plan': decision,
                                  'scoped_plan_member': server.name}
                   if decision else {})

    def alone(self, server: str) -> 'Launch':
        """The same request for one of its servers (a move)."""
        return dataclasses.replace(self, servers=(server,))

    def traits(self) -> typing.Tuple[typing.FrozenSet[str],
                                     typing.FrozenSet[str]]:
        """(required, forbidden) traits of the flavor and the image."""
        found: typing.Dict[str, typing.Set[str]] = {
            'required': set(), 'forbidden': set()}
        for specs in (self.extra_specs, self.image_properties):
            for key, value in specs.items():
                if key.startswith('trait:') and value in found:
                    found[value].add(key[len('trait:'):])
        return frozenset(found['required']), frozenset(found['forbidden'])


class Reach(typing.NamedTuple):
    """The hosts nova's HostManager hands the filters, of those Placement
    listed (``get_filtered_hosts``): none that is down, none of
    ``ignore_hosts``, and only the requested host when there is one.

    :param only: the requested host, if any.
    :param left_out: host -> why it is left out.
    """

    only: typing.Optional[str] = None
    left_out: typing.Mapping[str, str] = _EMPTY

    @property
    def everywhere(self) -> bool:
        """No host is left out."""
        return self.only is None and not self.left_out

    def why(self, host: str) -> typing.Optional[str]:
        """Why ``host`` is left out; None when it is not."""
        found = self.left_out.get(host)
        if found is None and self.only is not None and host != self.only:
            return NOT_REQUESTED
        return found

    def allows(self, host: str) -> bool:
        return self.why(host) is None


def reach(spec, down: typing.Iterable[str]) -> Reach:
    """What nova's HostManager keeps of the candidates of ``spec``.

    :param spec: the RequestSpec (after the request filters ran).
    :param down: the hosts that are down.
    """
    left = {host: DOWN for host in down}
    ignored = spec.ignore_hosts if 'ignore_hosts' in spec else None
    for host in ignored or ():
        left.setdefault(host, OWN_HOST)
    destination = spec.requested_destination \
        if 'requested_destination' in spec else None
    only = destination.host if destination is not None and \
        'host' in destination else None
    return Reach(only or None, left)


class NovaGroup(typing.NamedTuple):
    """Nova's server group of a request, as nova's conductor fills it in.

    :param uuid: the group's uuid.
    :param name: its name.
    :param policy: its Nova policy (None: none).
    :param rules: its Nova rules.
    :param members: its members' instance uuids.
    :param hosts: the hosts they run on.
    """

    uuid: str
    name: str
    policy: typing.Optional[str]
    rules: typing.Mapping[str, typing.Any]
    members: typing.List[str]
    hosts: typing.List[str]


def request_spec(ctxt, launch: Launch,
                 group: typing.Optional[NovaGroup]) -> 'objects.RequestSpec':
    """The RequestSpec of ``launch`` as nova's API builds it for a boot.

    :param ctxt: nova's request context.
    :param group: the request's server group, if any.
    """
    hints: typing.Dict[str, list] = {k: [v] for k, v in launch.hints.items()}
    instance_group = None
    if group is not None:
        instance_group = objects.InstanceGroup(
            uuid=group.uuid, name=group.name, policy=group.policy,
            policies=[group.policy] if group.policy else [],
            members=list(group.members), hosts=list(group.hosts),
            rules=dict(group.rules))
        hints['group'] = [group.uuid]
    # Other resource classes go where an operator puts them: the flavor's
    # resources:<RC> extra specs.
    extra_specs = {f'resources:{rc}': str(n)
                   for rc, n in launch.resources.items()
                   if rc not in FLAVOR_FIELDS}
    extra_specs.update(launch.extra_specs)
    flavor = objects.Flavor(
        vcpus=launch.resources.get('VCPU', 0),
        memory_mb=launch.resources.get('MEMORY_MB', 0),
        root_gb=launch.resources.get('DISK_GB', 0), ephemeral_gb=0,
        swap=0, extra_specs=extra_specs, name=launch.flavor,
        flavorid=launch.flavor)
    spec = objects.RequestSpec.from_components(
        ctxt, sc.stable_uuid('server', launch.servers[0]),
        {'properties': dict(launch.image_properties)}, flavor,
        None, objects.InstancePCIRequests(requests=[]),
        {'scheduler_hints': hints}, instance_group, None,
        project_id=launch.project, user_id=USER)
    spec.num_instances = len(launch.servers)
    spec.is_bfv = False
    # what nova's query reads of the spec before our request filters
    # edit it (the fast engine builds each such query once): a copy of
    # the spec has none
    spec.nsp_shape = (tuple(sorted(launch.resources.items())),
                      tuple(sorted(launch.extra_specs.items())),
                      tuple(sorted(launch.image_properties.items())),
                      tuple(sorted(hints)))
    return spec


def for_move(spec: 'objects.RequestSpec', uuid: str, source: str,
             host: typing.Optional[str] = None) -> 'objects.RequestSpec':
    """``spec`` (one server's) as nova's conductor sends it for a move of
    instance ``uuid`` from ``source``: to ``host`` when named (the filters
    check it), else anywhere but ``source``.
    """
    spec.instance_uuid = uuid
    spec.num_instances = 1
    if host is not None:
        spec.requested_destination = objects.Destination(host=host)
    else:
        spec.ignore_hosts = [source]
    return spec
