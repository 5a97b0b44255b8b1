"""How the seam recognises the nova it was written for: the parameters of
every nova function it wraps or calls by a private name, compared before
anything is touched. A nova that differs is refused (:class:`UnknownNova`)
and nothing is patched."""

import inspect
import types
import typing

WRITTEN_FOR = 'nova 34'
"""The nova release whose signatures the checks below hold."""


class UnknownNova(RuntimeError):
    """nova's internals are not the ones the seam was written for."""


def undecorated(func, name: str):
    """The function under decorators (oslo.messaging's
    ``expected_exceptions`` keeps it in its closure, not ``__wrapped__``).
    """
    func = inspect.unwrap(func)
    if func.__name__ == name:
        return func
    for cell in func.__closure__ or ():
        inner = cell.cell_contents
        if isinstance(inner, types.FunctionType):
            return undecorated(inner, name)
    return func


def parameters(func, name: str) -> typing.Tuple[str, ...]:
    """The parameter names of ``func`` under its decorators."""
    return tuple(inspect.signature(undecorated(func, name)).parameters)


def expect(where: str, func, expected: typing.Tuple[str, ...]) -> None:
    """Raise :class:`UnknownNova` unless ``func`` takes ``expected``.

    :param where: the dotted name of nova's function, for the message.
    """
    if func is None:
        raise UnknownNova(f'{where} is missing: nova-scoped-policies was '
                          f'written for {WRITTEN_FOR}')
    name = where.rsplit('.', 1)[-1]
    found = parameters(func, name)
    if found != expected:
        raise UnknownNova(
            f'{where} takes {found}, nova-scoped-policies expects '
            f'{expected} ({WRITTEN_FOR}): this nova release is not '
            f'supported')
