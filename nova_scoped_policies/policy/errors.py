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
        super().__init__(f"{field}: {value!r}: {problem}")
