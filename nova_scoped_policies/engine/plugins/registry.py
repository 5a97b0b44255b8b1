"""The registry of policy plugins: the one list every fold reads.

A declarative tuple rather than stevedore entry points: the engine is a
pure core that must load identically in the scheduler, the API, the
simulator and unit tests without an installed distribution's metadata,
and the order of the plugins is part of behaviour (reasons and audit
violations are listed in it). A new policy type is one module here and one
row in ``tests/unit/engine/test_plugins.py``; a plugin of a new
``TYPE[:SCOPE[:ID]]`` word defines it in its module
(``PolicyType.define``) and names it as its ``policy_type``: the parser's
vocabulary is read from here (:func:`vocabulary`).
"""

import types
import typing

from nova_scoped_policies.engine.plugins.affinity import Affinity
from nova_scoped_policies.engine.plugins.anti_affinity import AntiAffinity
from nova_scoped_policies.engine.plugins.base import Item
from nova_scoped_policies.engine.plugins.base import PolicyPlugin
from nova_scoped_policies.engine.plugins.min_domains import MinDomains
from nova_scoped_policies.engine.plugins.soft_affinity import SoftAffinity
from nova_scoped_policies.engine.plugins.soft_anti_affinity import \
    SoftAntiAffinity
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy.model import PolicyType

PLUGINS: typing.Tuple[PolicyPlugin, ...] = (
    Affinity(), AntiAffinity(), SoftAffinity(), SoftAntiAffinity(),
    MinDomains(),
)
"""Every plugin, in the order their items are evaluated."""


def vocabulary(plugins: typing.Optional[
        typing.Iterable[PolicyPlugin]] = None
               ) -> typing.Mapping[str, PolicyType]:
    """word -> policy type, for every plugin that owns one
    (``policy_type``), in the plugins' order: the words the policy parser
    accepts.

    :param plugins: the plugins to ask (default: :data:`PLUGINS`).
    """
    global _LAST
    plugins = PLUGINS if plugins is None else tuple(plugins)
    asked, known = _LAST
    if asked is not plugins:
        found: typing.Dict[str, PolicyType] = {}
        for plugin in plugins:
            ptype = getattr(plugin, 'policy_type', None)
            if ptype is not None:
                found.setdefault(ptype.value, ptype)
        known = types.MappingProxyType(found)
        _LAST = (plugins, known)
    return known


_LAST: typing.Tuple[typing.Any, typing.Any] = (None, None)
"""The last plugins asked and their vocabulary (parsing asks often)."""


def items(document: PolicyDocument,
          plugins: typing.Iterable[PolicyPlugin] = PLUGINS
          ) -> typing.List[typing.Tuple[PolicyPlugin, Item]]:
    """Every item of ``document`` with its plugin: the document's policies
    in their order, then its rules.

    :param document: the group's validated document.
    :param plugins: the plugins to ask.
    """
    found = [(plugin, item) for plugin in plugins
             for item in plugin.items(document)]
    order = {p: i for i, p in enumerate(document.policies)}
    return sorted(found, key=lambda pair: (
        (0, order[pair[1].policy]) if pair[1].policy is not None
        else (1, 0)))
