"""Options for oslo-config-generator and the sphinx extension."""

import collections

from nova_scoped_policies import conf
from nova_scoped_policies.conf import placement


def list_opts():
    """Every option group of the project, for oslo.config's tools.

    Fails loudly if a conf module forgets its ``list_opts``.
    """
    grouped = collections.defaultdict(list)
    for module in conf._MODULES + (placement,):
        lister = getattr(module, 'list_opts', None)
        if lister is None:
            raise AttributeError(
                f'{module.__name__} defines options but no list_opts()')
        for group, opts in lister().items():
            grouped[group].extend(opts)
    return [(group, opts) for group, opts in grouped.items()]
