"""How long a stack decision may take, from the request to the answer.

A :class:`Deadline` is made once, where the request comes in, and passed
down to everything that spends its time: reading the cloud, the solver
(which gets what is left), holding the decision and recording it::

    deadline = Deadline.wall(10.0)          # the policy service
    deadline = Deadline.work(10.0)          # the simulator

* **Wall time** (the policy service): the answer is due ``seconds`` after
  the deadline was made (``time.monotonic()``). Each phase reads
  :meth:`left` and ends by :attr:`at`; :meth:`before` keeps some of it
  for the phases after (holding and recording).
* **Deterministic work** (the simulator): no clock is read. Only the
  solver's search is bounded, by CP-SAT's deterministic time
  (``max_deterministic_time``, one worker), so that the same inputs give
  the same decision on any machine and under any load; the other phases
  run to their end.
"""

import time
import typing


class Deadline:
    """A decision's time limit (see the module).

    :param seconds: the limit as configured (what messages say).
    :param at: the ``time.monotonic()`` the answer is due by; None for
        deterministic work.
    :param started: when the limit began (``time.monotonic()``).
    """

    def __init__(self, seconds: float, at: typing.Optional[float],
                 started: float) -> None:
        self.seconds = seconds
        self.at = at
        self.started = started

    @classmethod
    def wall(cls, seconds: float,
             started: typing.Optional[float] = None) -> 'Deadline':
        """``seconds`` of wall time from ``started`` (default: now)."""
        started = time.monotonic() if started is None else started
        return cls(seconds, started + seconds, started)

    @classmethod
    def work(cls, seconds: float) -> 'Deadline':
        """``seconds`` of CP-SAT deterministic time for the search; no
        clock read anywhere."""
        return cls(seconds, None, 0.0)

    @property
    def deterministic(self) -> bool:
        """Whether the limit is deterministic work, not wall time."""
        return self.at is None

    def left(self) -> float:
        """Seconds left (never below 0); deterministic work: the whole
        limit, every time (nothing is spent by the clock)."""
        if self.at is None:
            return self.seconds
        return max(0.0, self.at - time.monotonic())

    def past(self) -> bool:
        """Whether the time is up (never, for deterministic work)."""
        return self.at is not None and time.monotonic() >= self.at

    def spent(self) -> float:
        """Seconds since the limit began (0 for deterministic work)."""
        if self.at is None:
            return 0.0
        return time.monotonic() - self.started

    def before(self, reserve: float) -> 'Deadline':
        """This deadline less ``reserve`` seconds kept for what comes
        after (deterministic work: unchanged)."""
        if self.at is None:
            return self
        return Deadline(self.seconds, self.at - reserve, self.started)

    def __repr__(self) -> str:
        if self.at is None:
            return f'Deadline.work({self.seconds:g})'
        return f'Deadline.wall({self.seconds:g}, left={self.left():.3f})'


NOT_FOUND = 'not found within the limit: may still fit'
"""What a decision cut short by its limit with no answer says (it is not
called infeasible: a longer limit may find one)."""


def not_found(deadline: Deadline, detail: str = '') -> str:
    """:data:`NOT_FOUND`, with the limit and ``detail`` (what took the
    time) in parentheses."""
    unit = ' of solver work' if deadline.deterministic else ''
    said = f'{deadline.seconds:g} s{unit}'
    if detail:
        said += f'; {detail}'
    return f'{NOT_FOUND} ({said})'
