"""Why a host was rejected: exported codes and the reason record.

Codes are stable strings for programs (logs, the simulator's JSON);
``Reason.message`` is for people and always names the policy, the scope,
the domain, the count and the limit that applied.
"""

import dataclasses
import typing

NO_DOMAIN = 'no-domain'
"""The host is in no domain of the policy's scope."""
MULTIPLE_DOMAINS = 'multiple-domains'
"""The host is in several domains of one scope (a deployer error)."""
UNKNOWN_SCOPE = 'unknown-scope'
"""A hard policy names a scope the deployer has not defined."""

GENERIC = {
    NO_DOMAIN: '{all}{n} hosts left are in no {scope} domain',
    MULTIPLE_DOMAINS: '{all}{n} hosts left are in several {scope} domains '
                      '(a deployer error)',
    UNKNOWN_SCOPE: 'scope {scope} is not defined',
}
"""The codes every scoped policy shares -> the sentence that sums them
up. Each plugin adds its own (``PolicyPlugin.codes``)."""


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


def summary(found: typing.Mapping[str, typing.Sequence[Reason]],
            why: typing.Mapping[str, str] = GENERIC
            ) -> typing.Optional[str]:
    """One line a tenant understands for why no host was left, naming no
    host or domain: e.g. ``scoped policies: anti-affinity:rack: all 4 rack
    domains hold 1 of max 1``.

    :param found: host -> the reasons it was rejected, for every host
        considered.
    :param why: code -> its sentence (the registry's
        :func:`~nova_scoped_policies.engine.plugins.registry.codes`).
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
        sentence = why.get(first.code, 'rules out {n} hosts')
        per_domain = '{n} {scope} domains' in sentence
        if first.scope == 'host':
            sentence = sentence.replace('{scope} domains', 'hosts')
        text = sentence.format(
            all='all ' if hosts == total else '',
            n=len(domains) if per_domain else hosts,
            scope=first.scope, count=min(r.count or 0 for r in reasons),
            limit=first.limit)
        parts.append(f'{policy}: {text}')
    return 'scoped policies: ' + '; '.join(sorted(parts))
