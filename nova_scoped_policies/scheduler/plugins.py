"""Load our filter and weigher classes through stevedore."""

import typing

from stevedore import extension

FILTERS_NAMESPACE = 'nova_scoped_policies.scheduler.filters'
WEIGHERS_NAMESPACE = 'nova_scoped_policies.scheduler.weighers'


def _raise(manager, entrypoint, exc):
    raise RuntimeError(f'cannot load {entrypoint}: {exc}') from exc


def load_classes(namespace: str) -> typing.List[type]:
    """Every class registered under ``namespace``, sorted by entry name.

    A broken entry point raises, so nova-scheduler fails at start rather
    than silently running without a policy filter.

    :param namespace: the stevedore namespace.
    """
    manager = extension.ExtensionManager(
        namespace, invoke_on_load=False,
        on_load_failure_callback=_raise)
    return [ext.plugin for ext in sorted(manager, key=lambda e: e.name)]
