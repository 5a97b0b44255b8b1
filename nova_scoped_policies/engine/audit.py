"""Audit a group's placements against its policies (pure Python).

server-group-update.rst: members may be added without enforcement, so
placements can violate the policies; the audit says where every member is
in each scope the group's policies use, and what is violated.
"""

import collections
import dataclasses
import typing

from nova_scoped_policies.engine import context
from nova_scoped_policies.engine.plugins.base import AuditView
from nova_scoped_policies.engine.plugins.base import Item
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.topology import Topology


@dataclasses.dataclass(frozen=True)
class MemberPlacement:
    """Where one member runs.

    :param member: the member id.
    :param host: its host, or None while unplaced.
    :param domains: scope -> domain id (None: in no domain; several are
        joined with ``,``).
    """

    member: str
    host: typing.Optional[str]
    domains: typing.Mapping[str, typing.Optional[str]]


@dataclasses.dataclass(frozen=True)
class Audit:
    members: typing.Tuple[MemberPlacement, ...]
    violations: typing.Tuple[str, ...]


def audit(document: PolicyDocument, topology: Topology,
          placements: typing.Mapping[str, typing.Optional[str]],
          name: typing.Callable[[str], str] = str) -> Audit:
    """Audit placed members against the group's hard policies and rules.

    :param document: the group's policies and rules, targets in real ids
        (``written`` says how violations name them).
    :param topology: scopes and domains.
    :param placements: member -> host (None while unplaced).
    :param name: member id -> name for messages.
    """
    scopes = sorted(document.scopes)
    placed = {m: h for m, h in placements.items() if h}
    where: typing.Dict[str, typing.Dict[str, typing.List[str]]] = {
        scope: collections.defaultdict(list) for scope in scopes}
    members = []
    violations: typing.List[str] = []
    for member in sorted(placements, key=name):
        host = placements[member]
        domains: typing.Dict[str, typing.Optional[str]] = {}
        for scope in scopes:
            found = topology.domains_of(scope, host) if host else ()
            domains[scope] = ','.join(found) or None
            for domain in found:
                where[scope][domain].append(member)
        members.append(MemberPlacement(member, host, domains))

    view = AuditView(topology, document.rules, placed, where, name,
                     _targets(document, topology))
    for plugin, item in registry.items(document):
        if plugin.hard:
            violations.extend(plugin.audit(item, view))
    return Audit(tuple(members), tuple(violations))


def _targets(document: PolicyDocument, topology: Topology
             ) -> typing.Callable[[Item], str]:
    """Item -> the real domain id it targets (ValueError: none)."""
    def target(item: Item) -> str:
        return context.target(topology, item.policy,
                              document.written.get(item.policy), 'policy')
    return target


def against_soft(document: PolicyDocument, topology: Topology,
                 placements: typing.Mapping[str, typing.Optional[str]],
                 members: typing.Iterable[str]) -> typing.Set[str]:
    """Which of ``members`` (placed) are where one of the group's soft
    policies would rather they were not (each plugin's ``against``).

    :param document: the group's policies, targets in real ids.
    :param topology: scopes and domains.
    :param placements: every member -> host (None while unplaced).
    :param members: the members asked about.
    """
    placed = {m: h for m, h in placements.items() if h}
    asked = [m for m in members if m in placed]
    soft = [(plugin, item) for plugin, item in registry.items(document)
            if not plugin.hard
            and topology.scope(item.scope) is not None]
    if not asked or not soft:
        return set()

    view = AuditView(topology, document.rules, placed, {}, str,
                     _targets(document, topology))

    def against(plugin, item, member) -> bool:
        try:
            return plugin.against(item, view, member)
        except ValueError:  # a target the topology no longer has
            return False

    return {m for m in asked
            if any(against(plugin, item, m) for plugin, item in soft)}
