"""Which policy words, rules and contradictions exist: the parser asks
the vocabulary, which the policy plugins provide.

The plugins sit above the policy model (they read it), so the parser does
not import them: the engine's registry (``engine/plugins/registry.py``)
hands itself over with :func:`use` when it is imported, and a process that
parses before anything imported the engine loads it through the stevedore
entry point ``nova_scoped_policies.policy.vocabulary`` (``plugins``).

A vocabulary offers ``by_word()`` (word -> plugin with ``policy_type``,
``parse(parts, text, field)`` and ``conflict(a, b)``), ``vocabulary()``
(word -> policy type), ``rules()`` (every rule: ``prefix``,
``by_policy``, ``low``, ``high``, ``check(about, value, policies,
rules)``) and ``plugin_of(policy_type)``.
"""

import threading
import typing

NAMESPACE = 'nova_scoped_policies.policy.vocabulary'
NAME = 'plugins'

_current: typing.Any = None
_lock = threading.Lock()


def use(vocabulary: typing.Any) -> None:
    """Parse with ``vocabulary`` from now on."""
    global _current
    _current = vocabulary


def current() -> typing.Any:
    """The vocabulary in use, loaded from the entry point the first time
    when none was handed over."""
    if _current is None:
        with _lock:
            if _current is None:
                from stevedore import driver
                use(driver.DriverManager(NAMESPACE, NAME).driver)
    return _current
