"""Group policy documents: the plain model, and its parser.

The parser asks the policy plugins' vocabulary (which words, rules and
contradictions exist: :mod:`.vocabulary`, provided by the engine's
registry, above this package), and the plugins read the model: the
parser's names are loaded on first use (PEP 562).
"""

import importlib
import typing

from nova_scoped_policies.policy.errors import PolicyError  # noqa: F401
from nova_scoped_policies.policy.errors import shown  # noqa: F401
from nova_scoped_policies.policy.model import HOST_SCOPE  # noqa: F401
from nova_scoped_policies.policy.model import Policy  # noqa: F401
from nova_scoped_policies.policy.model import PolicyDocument  # noqa: F401
from nova_scoped_policies.policy.model import PolicyType  # noqa: F401
from nova_scoped_policies.policy.model import Rules  # noqa: F401

_PARSER = ('as_objects', 'from_nova_group', 'merge', 'parse_document',
           'parse_objects', 'parse_policy')


def __getattr__(name: str) -> typing.Any:
    if name in _PARSER:
        parser = importlib.import_module('nova_scoped_policies.policy.parser')
        return getattr(parser, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
