"""Why a host was rejected: exported codes and the reason record.

Codes are stable strings for programs (logs, the simulator's JSON);
``Reason.message`` is for people and always names the policy, the scope,
the domain, the count and the limit that applied.
"""

import dataclasses
import typing

DOMAIN_FULL = 'domain-full'
"""anti-affinity:S: the host's domain already holds max_server_per_S."""
NO_DOMAIN = 'no-domain'
"""The host is in no domain of the policy's scope."""
MULTIPLE_DOMAINS = 'multiple-domains'
"""The host is in several domains of one scope (a deployer error)."""
NOT_WITH_MEMBERS = 'not-with-members'
"""affinity:S: the host's domain holds none of the placed members."""
NOT_TARGET = 'not-target'
"""affinity:S:ID: the host is not in the targeted domain."""
EXCLUDED_DOMAIN = 'excluded-domain'
"""anti-affinity:S:ID: the host is in the excluded domain."""
MIN_DOMAINS = 'min-domains'
"""min_domains_S: the remaining members must go to domains not used yet."""
UNKNOWN_SCOPE = 'unknown-scope'
"""A hard policy names a scope the deployer has not defined."""

ALL_CODES = (DOMAIN_FULL, NO_DOMAIN, MULTIPLE_DOMAINS, NOT_WITH_MEMBERS,
             NOT_TARGET, EXCLUDED_DOMAIN, MIN_DOMAINS, UNKNOWN_SCOPE)


@dataclasses.dataclass(frozen=True)
class Reason:
    """One rejection of one host by one policy or rule.

    :param code: one of the codes above.
    :param policy: the policy or rule, as the group states it.
    :param scope: the scope it applies in.
    :param domain: the host's domain (a name for people), if it has one.
    :param count: members counted in that domain (or domains used).
    :param limit: the limit that applied.
    :param message: the whole sentence, for logs and tenants.
    """

    code: str
    policy: str
    scope: str
    message: str
    domain: typing.Optional[str] = None
    count: typing.Optional[int] = None
    limit: typing.Optional[int] = None

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict:
        return {k: v for k, v in dataclasses.asdict(self).items()
                if v is not None}


_WHY = {
    DOMAIN_FULL: '{all}{n} {scope} domains hold {count} of max {limit}',
    NOT_WITH_MEMBERS: 'only the {scope} domain of the {limit} placed '
                      'member(s) qualifies, and none of its hosts passed',
    NOT_TARGET: 'only the targeted {scope} domain qualifies, and none of its '
                'hosts passed',
    EXCLUDED_DOMAIN: 'the hosts left are all in the excluded {scope} domain',
    MIN_DOMAINS: 'the members left must go to {scope} domains not used yet, '
                 'and none of those passed',
    NO_DOMAIN: '{all}{n} hosts left are in no {scope} domain',
    MULTIPLE_DOMAINS: '{all}{n} hosts left are in several {scope} domains '
                      '(a deployer error)',
    UNKNOWN_SCOPE: 'scope {scope} is not defined',
}


def summary(found: typing.Mapping[str, typing.Sequence[Reason]]
            ) -> typing.Optional[str]:
    """One line a tenant understands for why no host was left, naming no
    host or domain: e.g. ``scoped policies: anti-affinity:rack: all 4 rack
    domains hold 1 of max 1``.

    :param found: host -> the reasons it was rejected, for every host
        considered.
    :returns: None when some host passed every policy (the policies were
        not what left no host).
    """
    if not found or any(not reasons for reasons in found.values()):
        return None
    by_policy: typing.Dict[str, typing.List[Reason]] = {}
    for reasons in found.values():
        for reason in reasons:
            by_policy.setdefault(reason.policy, []).append(reason)
    total = len(found)
    parts = []
    for policy, reasons in by_policy.items():
        first = reasons[0]
        hosts = sum(1 for rs in found.values()
                    if any(r.policy == policy for r in rs))
        domains = {r.domain for r in reasons if r.domain}
        why = _WHY.get(first.code, 'rules out {n} hosts')
        if first.scope == 'host':
            why = why.replace('{scope} domains', 'hosts')
        text = why.format(
            all='all ' if hosts == total else '',
            n=len(domains) if first.code == DOMAIN_FULL else hosts,
            scope=first.scope, count=min(r.count or 0 for r in reasons),
            limit=first.limit)
        parts.append(f'{policy}: {text}')
    return 'scoped policies: ' + '; '.join(sorted(parts))
