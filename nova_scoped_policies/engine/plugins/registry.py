"""The registry of policy plugins: the one list every fold reads.

A declarative tuple rather than stevedore entry points: the engine is a
pure core that must load identically in the scheduler, the API, the
simulator and unit tests without an installed distribution's metadata,
and the order of the plugins is part of behaviour (reasons and audit
violations are listed in it). A new policy type is one directory here
(its plugin, its ``PolicyType.define``, its rules, reason codes, joint
encoding, nova filter or weigher family) plus its line below and its rows
in ``tests/unit/engine/test_plugins.py``; the parser, the engine, the
solver, the reasons' summary, the scope checks and the nova filters and
weighers read everything else from here.
"""

import sys
import types
import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.plugins.affinity import Affinity
from nova_scoped_policies.engine.plugins.anti_affinity import AntiAffinity
from nova_scoped_policies.engine.plugins.bandwidth import Bandwidth
from nova_scoped_policies.engine.plugins.base import Item
from nova_scoped_policies.engine.plugins.base import PolicyPlugin
from nova_scoped_policies.engine.plugins.base import Rule
from nova_scoped_policies.engine.plugins.hops import Hops
from nova_scoped_policies.engine.plugins.license import License
from nova_scoped_policies.engine.plugins.min_domains import MinDomains
from nova_scoped_policies.engine.plugins.soft_affinity import SoftAffinity
from nova_scoped_policies.engine.plugins.soft_anti_affinity import \
    SoftAntiAffinity
from nova_scoped_policies.engine.plugins.soft_hops import SoftHops
from nova_scoped_policies.engine.plugins.soft_license_pack import \
    SoftLicensePack
from nova_scoped_policies.engine.plugins.soft_spread import SoftSpread
from nova_scoped_policies.engine.plugins.spread import Spread
from nova_scoped_policies.engine.plugins.weight import Weight
from nova_scoped_policies.policy import vocabulary as vocabulary_of_policies
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy.model import PolicyType

PLUGINS: typing.Tuple[PolicyPlugin, ...] = (
    Affinity(), AntiAffinity(), SoftAffinity(), SoftAntiAffinity(),
    Spread(), SoftSpread(), License(), SoftLicensePack(),
    Hops(), SoftHops(), Bandwidth(),
    MinDomains(), Weight(),
)
"""Every plugin, in the order their items are evaluated."""


def _cached(fn: typing.Callable[[typing.Tuple[PolicyPlugin, ...]],
                                typing.Any]):
    """``fn(plugins)`` computed once per plugins tuple (parsing asks
    often); ``plugins`` defaults to :data:`PLUGINS`."""
    last: typing.List[typing.Any] = [None, None]

    def cached(plugins: typing.Optional[
            typing.Iterable[PolicyPlugin]] = None):
        plugins = PLUGINS if plugins is None else tuple(plugins)
        if last[0] is not plugins:
            last[:] = [plugins, fn(plugins)]
        return last[1]
    cached.__doc__ = fn.__doc__
    return cached


@_cached
def by_word(plugins) -> typing.Mapping[str, PolicyPlugin]:
    """word -> the plugin that owns its policy type, in the plugins'
    order: the words the policy parser accepts."""
    found: typing.Dict[str, PolicyPlugin] = {}
    for plugin in plugins:
        ptype = getattr(plugin, 'policy_type', None)
        if ptype is not None:
            found.setdefault(ptype.value, plugin)
    return types.MappingProxyType(found)


def vocabulary(plugins: typing.Optional[
        typing.Iterable[PolicyPlugin]] = None
               ) -> typing.Mapping[str, PolicyType]:
    """word -> policy type, for every plugin that owns one."""
    return {word: plugin.policy_type
            for word, plugin in by_word(plugins).items()}


def plugin_of(ptype: PolicyType) -> PolicyPlugin:
    """The plugin that owns the policy type ``ptype``."""
    return by_word()[ptype.value]


@_cached
def rules(plugins) -> typing.Tuple[Rule, ...]:
    """Every rule a plugin owns, in the plugins' order."""
    return tuple(rule for plugin in plugins for rule in plugin.rules)


@_cached
def codes(plugins) -> typing.Mapping[str, str]:
    """Every reason code -> the sentence that sums it up for a tenant."""
    found = dict(reasons.GENERIC)
    for plugin in plugins:
        found.update(plugin.codes)
    return types.MappingProxyType(found)


@_cached
def _families(plugins) -> typing.Mapping[str, typing.FrozenSet[str]]:
    found: typing.Dict[str, typing.Set[str]] = {}
    for plugin in plugins:
        for kind in (plugin.filter, plugin.weigher):
            if kind is not None:
                found.setdefault(kind, set()).add(plugin.name)
    return {k: frozenset(v) for k, v in found.items()}


def families(kind: str) -> typing.FrozenSet[str]:
    """The plugins (families) a nova filter or weigher of ``kind``
    carries (``anti-affinity``: the hard anti-affinity checks, spread's,
    min_domains'...)."""
    return _families().get(kind, frozenset())


def items(document: PolicyDocument,
          plugins: typing.Optional[typing.Iterable[PolicyPlugin]] = None
          ) -> typing.List[typing.Tuple[PolicyPlugin, Item]]:
    """Every item of ``document`` with its plugin: the document's policies
    in their order, then its rules.

    :param document: the group's validated document.
    :param plugins: the plugins to ask (default: :data:`PLUGINS`).
    """
    plugins = PLUGINS if plugins is None else plugins
    found = [(plugin, item) for plugin in plugins
             for item in plugin.items(document)]
    order = {p: i for i, p in enumerate(document.policies)}
    return sorted(found, key=lambda pair: (
        (0, order[pair[1].policy]) if pair[1].policy is not None
        else (1, 0)))


def hard(document: PolicyDocument) -> bool:
    """Whether any item of ``document`` is hard."""
    return any(plugin.hard for plugin, _ in items(document))


def placement_traits(documents: typing.Iterable[PolicyDocument]
                     ) -> typing.Set[str]:
    """The Placement traits the items of ``documents`` read
    (:meth:`PolicyPlugin.placement_traits`)."""
    return {trait for document in documents
            for plugin, item in items(document)
            for trait in plugin.placement_traits(item)}


class Undefined(typing.NamedTuple):
    """A policy or rule on a scope the cloud does not define.

    :param field: the policy's field (``policies[1]``, with the
        document's prefix), or the rule's key (``max_skew_rack``).
    :param value: the policy as written, or the rule's value.
    :param scope: the scope.
    :param rule: a rule (its field is the key alone).
    """

    field: str
    value: typing.Any
    scope: str
    rule: bool


def undefined_scope(document: PolicyDocument,
                    defined: typing.Callable[[str], bool]
                    ) -> typing.Optional[Undefined]:
    """The first policy, then rule, of ``document`` on a scope not
    ``defined``; None when all are. The one scope check of the policy
    API, the simulator's scenarios and stack documents.

    :param document: a validated document.
    :param defined: scope name -> whether the cloud defines it.
    """
    for i, policy in enumerate(document.policies):
        if not defined(policy.scope):
            return Undefined(document.field_of(i), str(policy),
                             policy.scope, False)
    for rule in rules():
        if rule.by_policy:
            continue
        for scope, value in sorted(document.rules.per_scope(
                rule.prefix).items()):
            if not defined(scope):
                return Undefined(f'{rule.prefix}{scope}', value, scope,
                                 True)
    return None


# the policy parser asks this registry which words, rules and
# contradictions exist (it sits below the plugins and does not import them)
vocabulary_of_policies.use(sys.modules[__name__])
