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
