"""The stack document as typed records (see stack-document.md)."""

import dataclasses
import typing

from nova_scoped_policies.policy.model import PolicyDocument


class StackError(ValueError):
    """A stack document is invalid.

    :param field: the offending field, e.g. ``stack.group.members[1].name``.
    :param message: what is wrong, for people.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f'{field}: {message}')


@dataclasses.dataclass(frozen=True)
class Flavor:
    """What scheduling needs of a flavor.

    :param resources: resource class -> amount (standard or ``CUSTOM_``).
    :param required: traits a host must have.
    :param forbidden: traits a host must not have.
    """

    resources: typing.Mapping[str, int]
    required: typing.FrozenSet[str] = frozenset()
    forbidden: typing.FrozenSet[str] = frozenset()


@dataclasses.dataclass(frozen=True)
class Server:
    """One server of a leaf group.

    :param name: unique in the stack (``<group>-<n>`` or as listed).
    :param group: the name of its leaf group.
    :param flavor: what it needs.
    """

    name: str
    group: str
    flavor: Flavor


@dataclasses.dataclass(frozen=True)
class Group:
    """A group of the stack tree: a leaf (``servers``) or inner (``members``).

    :param name: unique in the stack.
    :param field: where it is in the document, for errors.
    :param document: its policies and rules (LLMN expanded). On a leaf they
        mean what they mean for a server group; on an inner group they apply
        across member groups (``max_server_per_<scope>`` counts the subtree).
    :param members: the member groups (inner groups only).
    :param servers: the servers (leaves only).
    """

    name: str
    field: str
    document: PolicyDocument
    members: typing.Tuple['Group', ...] = ()
    servers: typing.Tuple[Server, ...] = ()

    @property
    def leaf(self) -> bool:
        return not self.members

    def all_servers(self) -> typing.Tuple[Server, ...]:
        """Every server of the subtree, in document order."""
        if self.leaf:
            return self.servers
        return tuple(s for m in self.members for s in m.all_servers())

    def walk(self) -> typing.Iterator['Group']:
        """This group and every group under it, depth first."""
        yield self
        for member in self.members:
            yield from member.walk()


@dataclasses.dataclass(frozen=True)
class Existing:
    """A relationship end that exists already (read, never moved).

    :param kind: ``server_group`` or ``server``.
    :param uuid: its uuid (normalised).
    """

    kind: str
    uuid: str


@dataclasses.dataclass(frozen=True)
class Relationship:
    """Policies between every pair (x in ``source``, y in ``target``).

    :param source: a group name of the stack.
    :param target: a group name of the stack, or an :class:`Existing`.
    :param document: the policies (symmetric).
    :param field: where it is in the document, for errors.
    """

    source: str
    target: typing.Union[str, Existing]
    document: PolicyDocument
    field: str


@dataclasses.dataclass(frozen=True)
class Stack:
    """A validated stack document.

    :param name: the stack name.
    :param lease_seconds: how long the decision is held.
    :param root: the root group.
    :param relationships: the relationships, in order.
    """

    name: str
    lease_seconds: int
    root: Group
    relationships: typing.Tuple[Relationship, ...] = ()

    @property
    def servers(self) -> typing.Tuple[Server, ...]:
        return self.root.all_servers()

    def group(self, name: str) -> typing.Optional[Group]:
        for group in self.root.walk():
            if group.name == name:
                return group
        return None

    @property
    def scopes(self) -> typing.FrozenSet[str]:
        """Every scope a policy or rule of the stack names."""
        found: typing.Set[str] = set()
        for group in self.root.walk():
            found |= group.document.scopes
        for rel in self.relationships:
            found |= rel.document.scopes
        return frozenset(found)
