"""Plain data types of the group policy document.

See ``shared/contracts/policy-document.md`` and doc/source/user/policies.rst.
Nothing here imports nova or talks to any service.
"""

import dataclasses
import typing

HOST_SCOPE = 'host'
"""The implicit scope: every host is the sole member of its own domain."""


class _Vocabulary(type):
    """Iterating :class:`PolicyType` lists the types defined so far."""

    def __iter__(cls) -> typing.Iterator['PolicyType']:
        return iter(list(cls._defined.values()))


class PolicyType(str, metaclass=_Vocabulary):
    """A policy type: the word a policy string starts with.

    One instance per word (compare with ``is``), equal to the word as a
    string. :meth:`define` makes a type; ``PolicyType(word)`` finds a
    defined one. Which words the parser accepts is the plugins' to say
    (:func:`nova_scoped_policies.policy.parser.vocabulary`, read from
    ``engine/plugins/registry.py``): a new type is defined in its
    plugin's module. The four defined here are the ones the parser's own
    rules name (LLMN, contradictions, ``max_server_per_<scope>``).
    """

    __slots__ = ()
    _defined: typing.ClassVar[typing.Dict[str, 'PolicyType']] = {}
    _traits: typing.ClassVar[typing.Dict[
        str, typing.Tuple[bool, typing.Optional[bool]]]] = {}

    AFFINITY: typing.ClassVar['PolicyType']
    ANTI_AFFINITY: typing.ClassVar['PolicyType']
    SOFT_AFFINITY: typing.ClassVar['PolicyType']
    SOFT_ANTI_AFFINITY: typing.ClassVar['PolicyType']

    def __new__(cls, value: str) -> 'PolicyType':
        found = cls._defined.get(value)
        if found is None:
            raise ValueError(f'{value!r} is not a defined PolicyType')
        return found

    @classmethod
    def define(cls, value: str, hard: bool,
               attracts: typing.Optional[bool]) -> 'PolicyType':
        """The type named ``value``, made on first call.

        :param value: the word (``affinity``).
        :param hard: a constraint (True) or a preference (False).
        :param attracts: the affinity family (True), the anti-affinity
            family (False: spreads members apart), or neither (None: a
            type about hosts, not about where members are together).
        :raises ValueError: ``value`` is defined already, otherwise.
        """
        found = cls._defined.get(value)
        if found is not None:
            if cls._traits[value] != (hard, attracts):
                raise ValueError(f'policy type {value!r} is defined '
                                 'already, otherwise')
            return found
        made = str.__new__(cls, value)
        cls._traits[value] = (hard, attracts)
        cls._defined[value] = made
        return made

    @property
    def value(self) -> str:
        return str.__str__(self)

    @property
    def hard(self) -> bool:
        return PolicyType._traits[self.value][0]

    @property
    def attracts(self) -> typing.Optional[bool]:
        """True for the affinity family, False for anti-affinity, None
        for neither."""
        return PolicyType._traits[self.value][1]

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f'PolicyType({self.value!r})'

    def __reduce__(self):
        return PolicyType, (self.value,)

    def __copy__(self) -> 'PolicyType':
        return self

    def __deepcopy__(self, memo) -> 'PolicyType':
        return self


PolicyType.AFFINITY = PolicyType.define('affinity', hard=True,
                                        attracts=True)
PolicyType.ANTI_AFFINITY = PolicyType.define('anti-affinity', hard=True,
                                             attracts=False)
PolicyType.SOFT_AFFINITY = PolicyType.define('soft-affinity', hard=False,
                                             attracts=True)
PolicyType.SOFT_ANTI_AFFINITY = PolicyType.define(
    'soft-anti-affinity', hard=False, attracts=False)


@dataclasses.dataclass(frozen=True)
class Policy:
    """One policy ``TYPE[:SCOPE[:IDENTIFIER]]``.

    :param type: the policy type.
    :param scope: the scope name; ``host`` when the string omitted it.
    :param identifier: the targeted domain as written by the caller, or None.
    :param argument: for a type whose word takes something else than a
        scope (``license:PRODUCT``), that argument; the scope is then
        ``host`` (the type reads hosts one by one).
    """

    type: PolicyType
    scope: str = HOST_SCOPE
    identifier: typing.Optional[str] = None
    argument: typing.Optional[str] = None

    @property
    def hard(self) -> bool:
        return self.type.hard

    def with_identifier(self, identifier: str) -> 'Policy':
        return dataclasses.replace(self, identifier=identifier)

    def __str__(self) -> str:
        if self.argument is not None:
            return f'{self.type.value}:{self.argument}'
        text = f'{self.type.value}:{self.scope}'
        if self.identifier is not None:
            text += f':{self.identifier}'
        return text


MAX_SERVER_PER = 'max_server_per_'
MIN_DOMAINS = 'min_domains_'
WEIGHT = 'weight_'
SIZE = 'size'


@dataclasses.dataclass(frozen=True)
class Rules:
    """The ``rules`` of a document.

    Which rules exist, and what they need, is the plugins' to say (each
    declares its :class:`~nova_scoped_policies.engine.plugins.base.Rule`);
    here they are plain values.

    :param by_scope: rule prefix (``max_server_per_``) -> scope -> value.
    :param weights: soft policy as written -> ``weight_<policy>``.
    :param size: the number of members the group is meant to have (M).
    """

    by_scope: typing.Mapping[str, typing.Mapping[str, int]] = \
        dataclasses.field(default_factory=dict)
    weights: typing.Mapping[str, int] = dataclasses.field(
        default_factory=dict)
    size: typing.Optional[int] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, 'by_scope', {
            prefix: dict(values)
            for prefix, values in sorted(self.by_scope.items()) if values})
        object.__setattr__(self, 'weights', dict(self.weights))

    def per_scope(self, prefix: str) -> typing.Mapping[str, int]:
        """scope -> value of the rules ``<prefix><scope>``."""
        return self.by_scope.get(prefix, {})

    @property
    def max_server_per(self) -> typing.Mapping[str, int]:
        """scope -> most members in one domain of it."""
        return self.per_scope(MAX_SERVER_PER)

    @property
    def min_domains(self) -> typing.Mapping[str, int]:
        """scope -> least number of domains members must use."""
        return self.per_scope(MIN_DOMAINS)

    def weight(self, label: str) -> int:
        """How much the soft policy ``label`` counts (default 1)."""
        return self.weights.get(label, 1)

    def without(self, prefix: str) -> 'Rules':
        """These rules less every ``<prefix><scope>``."""
        return Rules({p: v for p, v in self.by_scope.items()
                      if p != prefix}, self.weights, self.size)

    @property
    def scopes(self) -> typing.FrozenSet[str]:
        """Every scope a rule names."""
        return frozenset(s for values in self.by_scope.values()
                         for s in values)

    def to_dict(self) -> dict:
        out = {f'{prefix}{s}': n for prefix, values in self.by_scope.items()
               for s, n in sorted(values.items())}
        out.update({f'{WEIGHT}{label}': n
                    for label, n in sorted(self.weights.items())})
        if self.size is not None:
            out[SIZE] = self.size
        return dict(sorted(out.items()))


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
        return frozenset([p.scope for p in self.policies]) \
            | self.rules.scopes

    @property
    def empty(self) -> bool:
        """No policy, and no rule that applies without one
        (``min_domains_<scope>``)."""
        return not self.policies and not self.rules.min_domains

    def to_dict(self) -> dict:
        out: dict = {'policies': [str(p) for p in self.policies],
                     'rules': self.rules.to_dict()}
        if self.name is not None:
            out['name'] = self.name
        return out
