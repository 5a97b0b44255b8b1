"""The payloads of the policy service's versioned notifications.

Written as nova writes its own (``nova.notifications.objects``):
oslo.versionedobjects with a version each, serialised with their name,
namespace, version and data, so that consumers of nova's versioned
notifications read ours the same way. Each payload's JSON schema is
:meth:`~oslo_versionedobjects.base.VersionedObject.to_json_schema`
(published in ``doc/source/admin/notifications.rst`` and checked by the
tests against every notification received).

A payload carries the ids of its own object and project only: the
instances, hosts and domains of that object, never another project's.
"""

import typing

from oslo_versionedobjects import base
from oslo_versionedobjects import fields

NAMESPACE = 'nova_scoped_policies'
SERIAL_NAMESPACE = 'nova_scoped_policies_object'


class Registry(base.VersionedObjectRegistry):
    """Our payloads (a registry apart from nova's objects)."""


class Payload(base.VersionedObject):
    OBJ_PROJECT_NAMESPACE = NAMESPACE
    OBJ_SERIAL_NAMESPACE = SERIAL_NAMESPACE

    def primitive(self) -> dict:
        """The payload as sent on the bus."""
        return self.obj_to_primitive()


@Registry.register
class ScopedServerGroupPayload(Payload):
    """A server group's scoped policies (administrators' view: real
    identifiers)."""

    VERSION = '1.0'
    fields = {
        'id': fields.StringField(),
        'project_id': fields.StringField(),
        'name': fields.StringField(nullable=True),
        'policies': fields.ListOfStringsField(),
        'rules': fields.DictOfIntegersField(),
        'members': fields.ListOfStringsField(),
        'excluded_members': fields.ListOfStringsField(),
    }


@Registry.register
class ScopedServerGroupMemberPayload(Payload):
    """A group and the instance added to or removed from it."""

    VERSION = '1.0'
    fields = {
        'group': fields.ObjectField('ScopedServerGroupPayload'),
        'instance_id': fields.StringField(),
    }


@Registry.register
class PolicyScopePayload(Payload):
    """A deployer-defined scope."""

    VERSION = '1.0'
    fields = {
        'name': fields.StringField(),
        'aggregates': fields.ListOfStringsField(),
        'parent': fields.StringField(nullable=True),
        'allow_identifiers': fields.BooleanField(),
        'obfuscate_identifiers': fields.BooleanField(),
    }


@Registry.register
class StackPayload(Payload):
    """A stack decision and where its servers are decided."""

    VERSION = '1.0'
    fields = {
        'id': fields.StringField(),
        'name': fields.StringField(),
        'project_id': fields.StringField(),
        'status': fields.StringField(),
        'expires_at': fields.DateTimeField(),
        'servers': fields.DictOfNullableStringsField(),
        'states': fields.DictOfStringsField(),
    }


@Registry.register
class ViolationPayload(Payload):
    """Hard policies a group or a stack breaks, found by an audit."""

    VERSION = '1.0'
    fields = {
        'kind': fields.EnumField(['server_group', 'stack']),
        'id': fields.StringField(),
        'project_id': fields.StringField(),
        'violations': fields.ListOfStringsField(),
    }


@Registry.register
class RepairPayload(Payload):
    """A repair plan, or what applying one did."""

    VERSION = '1.0'
    fields = {
        'target': fields.StringField(),
        'status': fields.StringField(),
        'moves': fields.ListOfDictOfNullableStringsField(),
        'reason': fields.StringField(),
    }


def schemas() -> typing.Dict[str, dict]:
    """Payload name -> its JSON schema."""
    return {cls.obj_name(): cls.to_json_schema()
            for cls in (ScopedServerGroupPayload,
                        ScopedServerGroupMemberPayload, PolicyScopePayload,
                        StackPayload, ViolationPayload, RepairPayload)}


def of_group(record) -> ScopedServerGroupPayload:
    """From a stored group (``db.records.GroupRecord``)."""
    body = record.document.to_dict()
    return ScopedServerGroupPayload(
        id=record.uuid, project_id=record.project_id, name=record.name,
        policies=body['policies'], rules=body['rules'],
        members=list(record.members),
        excluded_members=list(record.excluded))


def of_member(record, instance_id: str) -> ScopedServerGroupMemberPayload:
    return ScopedServerGroupMemberPayload(group=of_group(record),
                                          instance_id=instance_id)


def of_scope(record) -> PolicyScopePayload:
    """From a stored scope (``db.records.ScopeRecord``)."""
    return PolicyScopePayload(
        name=record.name, aggregates=list(record.aggregates),
        parent=record.parent, allow_identifiers=record.allow_identifiers,
        obfuscate_identifiers=record.obfuscate_identifiers)


def of_stack(record, status: str) -> StackPayload:
    """From a stored decision (``db.stacks.StackRecord``).

    :param status: its phase as the API tells it.
    """
    return StackPayload(
        id=record.id, name=record.name, project_id=record.project_id,
        status=status, expires_at=record.expires_at,
        servers={n: s.host for n, s in record.servers.items()},
        states={n: s.state for n, s in record.servers.items()})


def of_violations(kind: str, id: str, project_id: str,
                  violations: typing.Iterable[str]) -> ViolationPayload:
    return ViolationPayload(kind=kind, id=id, project_id=project_id,
                            violations=list(violations))


def of_repair(target: str, status: str,
              moves: typing.Iterable[typing.Mapping[str, typing.Any]],
              reason: str = '') -> RepairPayload:
    """:param moves: the moves as the API shows them to administrators."""
    return RepairPayload(
        target=target, status=status, reason=reason or '',
        moves=[{k: (None if v is None else str(v)) for k, v in m.items()}
               for m in moves])
