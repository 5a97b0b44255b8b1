"""A group's members per domain of a scope, as bars for the templates."""

import dataclasses
import typing


@dataclasses.dataclass(frozen=True)
class Bar:
    domain: str
    count: int
    percent: int


@dataclasses.dataclass(frozen=True)
class Chart:
    """Members per domain of one scope.

    :param scope: the scope's name.
    :param bars: each domain, those with members first.
    """

    scope: str
    bars: typing.Tuple[Bar, ...]

    @classmethod
    def of(cls, scope: str, counts: typing.Mapping[str, int],
           known: typing.Iterable[str] = ()) -> 'Chart':
        """:param counts: domain -> members.
        :param known: the scope's domains (shown at zero if empty)."""
        every = dict.fromkeys(known, 0)
        every.update(counts)
        most = max(every.values(), default=0) or 1
        order = sorted(every.items(), key=lambda item: (-item[1], item[0]))
        return cls(scope, tuple(Bar(d, n, round(100 * n / most))
                                for d, n in order))

    @property
    def total(self) -> int:
        return sum(b.count for b in self.bars)
