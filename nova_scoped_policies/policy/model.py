"""Plain data types of the group policy document.

See ``shared/contracts/policy-document.md`` and doc/source/user/policies.rst.
Nothing here imports nova or talks to any service.
"""

import dataclasses
import enum
import typing

HOST_SCOPE = 'host'
"""The implicit scope: every host is the sole member of its own domain."""


class PolicyType(str, enum.Enum):
    AFFINITY = 'affinity'
    ANTI_AFFINITY = 'anti-affinity'
    SOFT_AFFINITY = 'soft-affinity'
    SOFT_ANTI_AFFINITY = 'soft-anti-affinity'

    @property
    def hard(self) -> bool:
        return self in (PolicyType.AFFINITY, PolicyType.ANTI_AFFINITY)

    @property
    def attracts(self) -> bool:
        """True for the affinity family, False for anti-affinity."""
        return self in (PolicyType.AFFINITY, PolicyType.SOFT_AFFINITY)

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class Policy:
    """One policy ``TYPE[:SCOPE[:IDENTIFIER]]``.

    :param type: the policy type.
    :param scope: the scope name; ``host`` when the string omitted it.
    :param identifier: the targeted domain as written by the caller, or None.
    """

    type: PolicyType
    scope: str = HOST_SCOPE
    identifier: typing.Optional[str] = None

    @property
    def hard(self) -> bool:
        return self.type.hard

    def with_identifier(self, identifier: str) -> 'Policy':
        return dataclasses.replace(self, identifier=identifier)

    def __str__(self) -> str:
        text = f'{self.type.value}:{self.scope}'
        if self.identifier is not None:
            text += f':{self.identifier}'
        return text


@dataclasses.dataclass(frozen=True)
class Rules:
    """The ``rules`` of a document, keyed by scope where they have one.

    :param max_server_per: scope -> most members in one domain of it.
    :param min_domains: scope -> least number of domains members must use.
    :param size: the number of members the group is meant to have (M).
    """

    max_server_per: typing.Mapping[str, int] = dataclasses.field(
        default_factory=dict)
    min_domains: typing.Mapping[str, int] = dataclasses.field(
        default_factory=dict)
    size: typing.Optional[int] = None

    def to_dict(self) -> dict:
        out = {f'max_server_per_{s}': n
               for s, n in sorted(self.max_server_per.items())}
        out.update({f'min_domains_{s}': n
                    for s, n in sorted(self.min_domains.items())})
        if self.size is not None:
            out['size'] = self.size
        return out


@dataclasses.dataclass(frozen=True)
class PolicyDocument:
    """A validated, normalised policy document (LLMN already expanded).

    :param policies: the policies, in the order given, without duplicates.
    :param rules: the rules.
    :param name: the group name, if the document carried one.
    :param fields: policy -> the field it came from (e.g.
        ``scoped_policies.policies[0]``), for errors; not part of equality.
    :param written: policy -> how the caller wrote it, once its identifier
        was translated to the real one (see ``identifiers.to_real``), for
        reasons and errors; not part of equality.
    """

    policies: typing.Tuple[Policy, ...] = ()
    rules: Rules = dataclasses.field(default_factory=Rules)
    name: typing.Optional[str] = None
    fields: typing.Mapping[Policy, str] = dataclasses.field(
        default_factory=dict, compare=False, repr=False)
    written: typing.Mapping[Policy, str] = dataclasses.field(
        default_factory=dict, compare=False, repr=False)

    def label_of(self, index: int) -> str:
        """``policies[index]`` as the caller wrote it."""
        policy = self.policies[index]
        return self.written.get(policy) or str(policy)

    def field_of(self, index: int) -> str:
        """Where ``policies[index]`` came from, for error messages."""
        return self.fields.get(self.policies[index], f'policies[{index}]')

    @property
    def scopes(self) -> typing.FrozenSet[str]:
        """Every scope a policy or rule of the document refers to."""
        return frozenset(
            [p.scope for p in self.policies]
            + list(self.rules.max_server_per) + list(self.rules.min_domains))

    @property
    def empty(self) -> bool:
        return not self.policies and not self.rules.min_domains

    def to_dict(self) -> dict:
        out: dict = {'policies': [str(p) for p in self.policies],
                     'rules': self.rules.to_dict()}
        if self.name is not None:
            out['name'] = self.name
        return out
