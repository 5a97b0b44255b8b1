"""What a stack's decision, and its life after, read of the cloud."""

import dataclasses
import typing

from nova_scoped_policies.topology import Topology


@dataclasses.dataclass(frozen=True)
class HostState:
    """One compute host as the solver sees it.

    :param name: the compute host name.
    :param provider: its root resource provider uuid (for holds).
    :param free: resource class -> capacity left (inventory minus usage,
        allocation ratio and reserved applied).
    :param traits: the provider's traits.
    """

    name: str
    provider: str
    free: typing.Mapping[str, int]
    traits: typing.FrozenSet[str] = frozenset()


@dataclasses.dataclass(frozen=True)
class World:
    """What a decision reads: hosts, topology and existing servers.

    :param hosts: every candidate host.
    :param topology: scopes, domains (real ids) and scope parents.
    :param servers: existing server uuid -> host, for relationships.
    :param server_groups: existing server group uuid -> hosts of its members.
    """

    hosts: typing.Tuple[HostState, ...]
    topology: Topology
    servers: typing.Mapping[str, str] = dataclasses.field(
        default_factory=dict)
    server_groups: typing.Mapping[str, typing.Tuple[str, ...]] = \
        dataclasses.field(default_factory=dict)
