"""Typed records of the policy store: what the store returns and its
readers (drivers, topology parsers, API views) pass around.

Plain frozen dataclasses (no SQLAlchemy here: the scheduler and the
topology import this module); callers read their attributes. Sequences
are tuples. A record is not a mapping: JSON bodies are rendered from the
attributes by the API's views (:mod:`nova_scoped_policies.api.views`),
and a body read back from the policy API becomes a record through
:meth:`ScopeRecord.of`.
"""

import dataclasses
import datetime
import typing

from nova_scoped_policies.policy.model import PolicyDocument


@dataclasses.dataclass(frozen=True)
class ScopeRecord:
    """A stored scope.

    :param name: the scope name used in policies.
    :param allow_identifiers: tenants may target its domains.
    :param obfuscate_identifiers: tenants see per-tenant identifiers.
    :param obfuscate_namespace_uuid: the obfuscation namespace (a uuid
        string), or None.
    :param aggregates: the uuids of its domains, in the order stored.
    :param parent: a coarser scope it nests in, or None.
    :param uuid: the scope's uuid (None for records not read from a store).
    :param created_at: when it was created.
    :param updated_at: when it last changed.
    """

    name: str
    allow_identifiers: bool = False
    obfuscate_identifiers: bool = False
    obfuscate_namespace_uuid: typing.Optional[str] = None
    aggregates: typing.Tuple[str, ...] = ()
    parent: typing.Optional[str] = None
    uuid: typing.Optional[str] = None
    created_at: typing.Optional[datetime.datetime] = None
    updated_at: typing.Optional[datetime.datetime] = None

    @classmethod
    def of(cls, body: typing.Mapping[str, typing.Any]) -> 'ScopeRecord':
        """A record from a scope of the policy API as an admin sees it
        (a ``policy_scope`` body: ISO 8601 times, lists for sequences).

        :param body: the scope's JSON object.
        """
        return cls(name=body['name'],
                   allow_identifiers=bool(body.get('allow_identifiers')),
                   obfuscate_identifiers=bool(
                       body.get('obfuscate_identifiers')),
                   obfuscate_namespace_uuid=body.get(
                       'obfuscate_namespace_uuid'),
                   aggregates=tuple(body.get('aggregates') or ()),
                   parent=body.get('parent'), uuid=body.get('uuid'),
                   created_at=_time(body.get('created_at')),
                   updated_at=_time(body.get('updated_at')))


def _time(value: typing.Optional[str]
          ) -> typing.Optional[datetime.datetime]:
    """A time of a JSON body (ISO 8601, as the views write it)."""
    return None if value is None else datetime.datetime.fromisoformat(value)


@dataclasses.dataclass(frozen=True)
class GroupRecord:
    """The stored scoped policies of a Nova server group.

    :param uuid: the Nova server group's uuid.
    :param project_id: the group's project.
    :param document: its policies, with real identifiers.
    :param members: the instances added through the policy API.
    :param excluded: the instances Nova booted into the group that were
        taken out of its scoped policies (``remove_instance``): Nova still
        lists them as members; they count for nothing here.
    :param name: its name, or None.
    :param user_id: who created it.
    :param created_at: when it was created.
    :param updated_at: when it last changed.
    """

    uuid: str
    project_id: str
    document: PolicyDocument
    members: typing.Tuple[str, ...] = ()
    excluded: typing.Tuple[str, ...] = ()
    name: typing.Optional[str] = None
    user_id: typing.Optional[str] = None
    created_at: typing.Optional[datetime.datetime] = None
    updated_at: typing.Optional[datetime.datetime] = None

    def counted(self, booted: typing.Iterable[str] = ()
                ) -> typing.Tuple[str, ...]:
        """The members the group's scoped policies count: those added
        through the policy API, then ``booted``, once each, without the
        excluded ones.

        :param booted: the group's members as Nova lists them.
        """
        found: typing.Dict[str, None] = dict.fromkeys(self.members)
        found.update(dict.fromkeys(booted))
        return tuple(m for m in found if m not in self.excluded)

    @classmethod
    def of(cls, body: typing.Mapping[str, typing.Any],
           document: PolicyDocument) -> 'GroupRecord':
        """A record from a group of the policy API as an admin sees it (a
        ``server_group`` body), with its policies already parsed.

        :param body: the group's JSON object (``excluded_members`` may be
            missing: a service older than exclusions has none).
        :param document: its ``policies`` and ``rules``, parsed.
        """
        return cls(uuid=body['id'], project_id=body['project_id'],
                   document=document, members=tuple(body['members']),
                   excluded=tuple(body.get('excluded_members') or ()),
                   name=body.get('name'), user_id=body.get('user_id'),
                   created_at=_time(body.get('created_at')),
                   updated_at=_time(body.get('updated_at')))
