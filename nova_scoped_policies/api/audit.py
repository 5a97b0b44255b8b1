"""A group's audit as one caller may see it.

The violations are computed on the caller's view of the placements, so
they name hosts and domains only by the identifiers shown; policies keep
their real identifiers and are named as the group's tenant writes them
(``identifiers.worded``). :func:`.views.audit` serialises the result.
"""

import dataclasses
import typing

from nova_scoped_policies.api import visibility
from nova_scoped_policies.db import records
from nova_scoped_policies.engine import audit as audit_mod
from nova_scoped_policies import identifiers
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies import topology as topo


@dataclasses.dataclass(frozen=True)
class GroupAudit:
    """The audit of one group for one viewer.

    :param group: the stored group.
    :param result: members, their domains (real ids) and violations (in
        the viewer's identifiers).
    :param shown: (scope, real id) -> what the viewer sees of it.
    """

    group: records.GroupRecord
    result: audit_mod.Audit
    shown: typing.Callable[[str, str], str]


def audit(record: records.GroupRecord, who: visibility.Viewer,
          topology: topo.Topology,
          hosts: typing.Mapping[str, typing.Optional[str]]) -> GroupAudit:
    """Audit a group's placements for ``who``.

    :param record: the stored group (policies with real identifiers).
    :param who: the viewer.
    :param topology: the stored scopes, with the hosts of members.
    :param hosts: member -> host.
    """
    document = identifiers.worded(record.document, topology,
                                  record.project_id)
    shown = visibility.shown_by(who, topology)
    view_hosts = {m: (shown(HOST_SCOPE, h) if h else None)
                  for m, h in hosts.items()}
    domains = []
    for name in topology.scope_names:
        for d in topology.domains(name):
            domains.append(topo.Domain(
                d.id, shown(name, d.id), name,
                frozenset(shown(HOST_SCOPE, h) for h in d.hosts)))
    view = topo.build([topology.scope(n) for n in topology.scope_names],
                      domains)
    return GroupAudit(record, audit_mod.audit(document, view, view_hosts),
                      shown)
