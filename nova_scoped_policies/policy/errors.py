"""Errors raised for bad policy input."""


class PolicyError(ValueError):
    """A policy document, policy string or rule is invalid.

    Every error names the field it is about (``policies[1]``,
    ``rules.max_server_per_rack``, ``llmn.n``) and the offending value, so
    that an API can answer 400 and a scheduler can log something a tenant
    or operator can act on.

    :param field: dotted path of the offending field in the document.
    :param value: the offending value, as given.
    :param problem: what is wrong with it, in plain words.
    """

    def __init__(self, field: str, value: object, problem: str) -> None:
        self.field = field
        self.value = value
        self.problem = problem
        super().__init__(f"{field}: {shown(value)}: {problem}")


SHOWN = 64
"""Most characters of a bad value an error repeats."""


def shown(value: object) -> str:
    """``repr(value)``, cut to :data:`SHOWN` characters: an error never
    echoes a long value back."""
    try:
        text = repr(value) if not isinstance(value, int) or \
            abs(value) < 10 ** SHOWN else f'<{value.bit_length()}-bit int>'
    except ValueError:   # ints beyond Python's str conversion limit
        text = '<a very large number>'
    return text if len(text) <= SHOWN else text[:SHOWN] + '...'
