"""Audit a group's placements against its policies (pure Python).

server-group-update.rst: members may be added without enforcement, so
placements can violate the policies; the audit says where every member is
in each scope the group's policies use, and what is violated.
"""

import collections
import dataclasses
import typing

from nova_scoped_policies.engine.context import DEFAULT_MAX_SERVER_PER
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.policy.model import PolicyType
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
          project_id: typing.Optional[str] = None,
          name: typing.Callable[[str], str] = str) -> Audit:
    """Audit placed members against the group's hard policies and rules.

    :param document: the group's policies and rules.
    :param topology: scopes and domains.
    :param placements: member -> host (None while unplaced).
    :param project_id: the group's tenant, to resolve obfuscated targets.
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

    def listed(ids):
        return ', '.join(sorted(name(i) for i in ids))

    dname = topology.domain_name
    for policy in document.policies:
        if not policy.hard:
            continue
        label, scope = str(policy), policy.scope
        if topology.scope(scope) is None:
            violations.append(f'{label}: scope {scope} is not defined')
            continue
        if scope != HOST_SCOPE:
            for member, host in sorted(placed.items()):
                found = topology.domains_of(scope, host)
                if len(found) != 1:
                    what = ('no domain' if not found else
                            f'{len(found)} domains')
                    violations.append(f'{label}: {name(member)} runs on '
                                      f'{host}, in {what} of scope {scope}')
        by_domain = where[scope]
        if policy.identifier is not None:
            try:
                target = topology.resolve_identifier(
                    scope, policy.identifier, project_id)
            except ValueError as exc:
                violations.append(f'{label}: {exc}')
                continue
            if policy.type is PolicyType.AFFINITY:
                outside = [m for m in placed if m not in by_domain[target]]
                if outside:
                    violations.append(f'{label}: {listed(outside)} not in '
                                      f'{dname(target)}')
            elif by_domain[target]:
                violations.append(f'{label}: {listed(by_domain[target])} in '
                                  f'excluded {dname(target)}')
        elif policy.type is PolicyType.AFFINITY:
            if len(by_domain) > 1:
                spread = ', '.join(sorted(dname(d) for d in by_domain))
                violations.append(f'{label}: members are in {len(by_domain)} '
                                  f'domains ({spread})')
        else:
            limit = document.rules.max_server_per.get(
                scope, DEFAULT_MAX_SERVER_PER)
            for domain, there in sorted(by_domain.items()):
                if len(there) > limit:
                    violations.append(
                        f'{label}: {dname(domain)} holds {len(there)} of max '
                        f'{limit} ({listed(there)})')
    size = document.rules.size
    for scope, needed in sorted(document.rules.min_domains.items()):
        used = len(where[scope])
        if size is not None and len(placed) >= size and used < needed:
            violations.append(f'min_domains_{scope}: {len(placed)} members '
                              f'use {used} domain(s) of {needed}')
    return Audit(tuple(members), tuple(violations))
