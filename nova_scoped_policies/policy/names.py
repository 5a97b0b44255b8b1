"""The shapes of names in policy documents (pure, no other import).

Shared by the policy parser, the plugins that parse their own words
(``engine/plugins``) and the topology's aggregate metadata, without any
of them importing another.
"""

import re

from nova_scoped_policies.policy.errors import PolicyError

SCOPE_PATTERN = r'[A-Za-z0-9][A-Za-z0-9_.-]{0,63}'
SCOPE_RE = re.compile(SCOPE_PATTERN + r'\Z')
IDENTIFIER_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.:-]{0,254}\Z')
SCOPE_SHAPE = ('a scope name is 1-64 letters, digits, "_", "." or "-", '
               'starting with a letter or digit')

MAX_INT = 1000000
"""Largest value of a rule: no group holds a million servers."""


def validate_scope_name(field: str, value: object) -> str:
    """Return ``value`` if it is a valid scope name, else raise.

    :param field: the field to name in the error.
    :param value: the candidate scope name.
    """
    if not isinstance(value, str) or not SCOPE_RE.match(value):
        raise PolicyError(field, value, SCOPE_SHAPE)
    return value


def bounded_int(field: str, value: object, low: int = 1,
                high: int = MAX_INT) -> int:
    """``value`` as an integer in ``[low, high]``, else raise.

    Nova keeps group rules as strings ("3"): ASCII digits are accepted;
    bools, other digits ("²") and huge numbers are refused.
    """
    if isinstance(value, str) and value.isascii() and value.isdigit() \
            and len(value) <= 7:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) \
            or value < low:
        raise PolicyError(field, value, f'must be an integer >= {low}')
    if value > high:
        raise PolicyError(field, value, f'must be at most {high}')
    return value
