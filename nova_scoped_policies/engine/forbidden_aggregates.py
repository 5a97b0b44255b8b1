"""Forbidden aggregates from required traits (pure Python).

forbidden-aggregates.rst: an aggregate whose metadata holds
``trait:<NAME>=required`` admits only requests that require every such trait
(from flavor extra specs or image properties). Every other aggregate with
such keys is forbidden to the request: ``member_of=!in:<agg>,...``.
"""

import dataclasses
import re
import typing

import os_traits

TRAIT_PREFIX = 'trait:'
REQUIRED = 'required'
# Placement's pattern for custom traits (os-traits checks the prefix only).
_CUSTOM_RE = re.compile(r'CUSTOM_[A-Z0-9_]+\Z')


@dataclasses.dataclass(frozen=True)
class TraitAggregates:
    """Aggregate uuid -> the traits a request must require to use it.

    Build once per aggregate refresh with :func:`index`.

    :param required: uuid -> frozenset of trait names.
    :param problems: malformed metadata, for the operator (ignored keys).
    """

    required: typing.Mapping[str, typing.FrozenSet[str]]
    problems: typing.Tuple[str, ...] = ()

    def forbidden(self, requested: typing.AbstractSet[str]
                  ) -> typing.List[str]:
        """Aggregates the request may not use, sorted.

        :param requested: the traits the request requires.
        """
        return sorted(uuid for uuid, traits in self.required.items()
                      if not traits <= requested)


def valid_trait(name: str) -> bool:
    """A standard trait os-traits knows, or a well-formed CUSTOM_ one."""
    if os_traits.is_custom(name):
        return bool(_CUSTOM_RE.match(name))
    return name in _standard_traits()


_STANDARD: typing.Optional[typing.FrozenSet[str]] = None


def _standard_traits() -> typing.FrozenSet[str]:
    global _STANDARD
    if _STANDARD is None:
        _STANDARD = frozenset(os_traits.get_traits())
    return _STANDARD


def index(aggregates: typing.Iterable[typing.Any]) -> TraitAggregates:
    """Index the ``trait:X=required`` metadata of aggregates.

    Malformed keys (no name, unknown standard trait, bad custom name) and
    values other than ``required`` are reported and ignored, never fatal.

    :param aggregates: objects with ``uuid``, ``name`` and ``metadata``.
    """
    required: typing.Dict[str, typing.FrozenSet[str]] = {}
    problems: typing.List[str] = []
    for agg in aggregates:
        traits = set()
        for key, value in (agg.metadata or {}).items():
            if not key.startswith(TRAIT_PREFIX):
                continue
            name = key[len(TRAIT_PREFIX):]
            if not valid_trait(name):
                problems.append(f'aggregate {agg.name} ({agg.uuid}) metadata '
                                f'{key!r}: {name!r} is neither a standard '
                                'trait nor CUSTOM_[A-Z0-9_]+; key ignored')
                continue
            if str(value).strip().lower() != REQUIRED:
                problems.append(f'aggregate {agg.name} ({agg.uuid}) metadata '
                                f'{key}={value!r}: only {REQUIRED!r} is '
                                'understood; key ignored')
                continue
            traits.add(name)
        if traits:
            required[str(agg.uuid)] = frozenset(traits)
    return TraitAggregates(required, tuple(problems))
