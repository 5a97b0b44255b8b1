"""The policy store's operations: plain data in, typed records out
(:class:`records.ScopeRecord`, :class:`records.GroupRecord`).

Each :class:`PolicyStore` has its own oslo.db transaction factory, so one
process can hold several stores (tests on three backends, a service and a
scheduler driver). oslo.db turns every backend's unique-key error into
``DBDuplicateEntry``, which becomes :class:`Conflict` here.
"""

import typing
import uuid as uuidlib

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_serialization import jsonutils
import sqlalchemy as sa

from nova_scoped_policies.db import models
from nova_scoped_policies.db import records
from nova_scoped_policies import policy
from nova_scoped_policies import topology as topo

SCOPE_FIELDS = ('name', 'allow_identifiers', 'obfuscate_identifiers',
                'obfuscate_namespace_uuid', 'parent')


def canonical_uuid(value):
    """The canonical (lower-case, hyphenated) form of a uuid; a value that
    is no uuid is returned unchanged, so lookups by it simply miss."""
    try:
        return str(uuidlib.UUID(value))
    except (ValueError, TypeError, AttributeError):
        return value


class NotFound(Exception):
    """No such scope, group, aggregate or member."""


class Conflict(Exception):
    """The change clashes with what is stored; the message says how."""


@enginefacade.transaction_context_provider
class _Context:
    pass


def _scope_record(row: models.PolicyScope) -> records.ScopeRecord:
    return records.ScopeRecord(
        uuid=row.uuid, name=row.name,
        allow_identifiers=row.allow_identifiers,
        obfuscate_identifiers=row.obfuscate_identifiers,
        obfuscate_namespace_uuid=row.obfuscate_namespace_uuid,
        parent=row.parent,
        aggregates=tuple(a.aggregate_uuid for a in row.aggregates),
        created_at=row.created_at, updated_at=row.updated_at)


def _group_record(row: models.ScopedGroup) -> records.GroupRecord:
    return records.GroupRecord(
        uuid=row.uuid, project_id=row.project_id, user_id=row.user_id,
        name=row.name,
        document=policy.parse_document(jsonutils.loads(row.document)),
        members=tuple(m.instance_uuid for m in row.members),
        excluded=tuple(e.instance_uuid for e in row.exclusions),
        created_at=row.created_at, updated_at=row.updated_at)


class PolicyStore:
    """Scopes and scoped groups in one SQL database.

    :param connection: an SQLAlchemy URL (``sqlite:///...``,
        ``postgresql+psycopg2://...``, ``mysql+pymysql://...``).
    """

    def __init__(self, connection: str, connect_timeout: int = 5,
                 max_retries: int = 1) -> None:
        """:param connect_timeout: seconds to wait for a database server.
        :param max_retries: connection attempts, one second apart, before
            the store counts as unreachable (oslo.db's default is 10 x
            10 s)."""
        self._tm = enginefacade.transaction_context()
        params = None
        if connection.startswith(('mysql', 'postgresql')):
            params = f'connect_timeout={int(connect_timeout)}'
        self._tm.configure(connection=connection, sqlite_fk=True,
                           max_retries=max_retries, retry_interval=1,
                           connection_parameters=params)

    @property
    def engine(self):
        return self._tm.writer.get_engine()

    def _writer(self):
        return self._tm.writer.using(_Context())

    def _reader(self):
        return self._tm.reader.using(_Context())

    # -- scopes ----------------------------------------------------------

    @staticmethod
    def _scope(session, ref: str, lock: bool = False) -> models.PolicyScope:
        query = sa.select(models.PolicyScope).where(
            sa.or_(models.PolicyScope.uuid == canonical_uuid(ref),
                   models.PolicyScope.name == ref))
        if lock:   # SELECT ... FOR UPDATE (PostgreSQL, MariaDB)
            query = query.with_for_update()
        row = session.scalars(query).first()
        if row is None:
            raise NotFound(f'policy scope {ref} not found')
        return row

    def create_scope(self, name: str, allow_identifiers: bool = False,
                     obfuscate_identifiers: bool = False,
                     obfuscate_namespace_uuid: typing.Optional[str] = None,
                     uuid: typing.Optional[str] = None,
                     aggregates: typing.Iterable[str] = (),
                     parent: typing.Optional[str] = None
                     ) -> records.ScopeRecord:
        """Create a scope and its domains in one transaction; its namespace
        is random when not given. ``parent`` names a coarser scope it
        nests in (checked against the hosts where stacks use it).

        :raises Conflict: a scope of that name (or uuid) exists, or one of
            the aggregates is a domain of another scope.
        """
        aggregates = [canonical_uuid(a) for a in aggregates]
        if uuid is not None:
            uuid = canonical_uuid(uuid)
        taken = self._owners(aggregates)
        if taken:
            raise Conflict('; '.join(f'aggregate {a} is a domain of scope '
                                     f'{owner} already'
                                     for a, owner in taken))
        try:
            with self._writer() as session:
                row = models.PolicyScope(
                    uuid=uuid or str(uuidlib.uuid4()), name=name,
                    allow_identifiers=allow_identifiers,
                    obfuscate_identifiers=obfuscate_identifiers,
                    obfuscate_namespace_uuid=(obfuscate_namespace_uuid
                                              or str(uuidlib.uuid4())),
                    parent=parent)
                row.aggregates = [
                    models.PolicyScopeAggregate(aggregate_uuid=a)
                    for a in aggregates]
                session.add(row)
                session.flush()
                return _scope_record(row)
        except db_exc.DBDuplicateEntry:
            raise Conflict(f'a policy scope named {name} exists already, or '
                           'one of its aggregates was taken concurrently')

    def get_scope(self, ref: str) -> records.ScopeRecord:
        """A scope by uuid or name. :raises NotFound:"""
        with self._reader() as session:
            return _scope_record(self._scope(session, ref))

    def list_scopes(self) -> typing.List[records.ScopeRecord]:
        with self._reader() as session:
            return [_scope_record(r) for r in session.scalars(
                sa.select(models.PolicyScope).order_by(
                    models.PolicyScope.name))]

    def update_scope(self, ref: str, **fields) -> records.ScopeRecord:
        """Change ``name``, the identifier flags or the namespace.

        :raises NotFound: no such scope.
        :raises Conflict: the name is taken, or identifiers would be
            disallowed while groups target the scope's domains.
        """
        unknown = set(fields) - set(SCOPE_FIELDS)
        if unknown:
            raise ValueError(f'cannot update {", ".join(sorted(unknown))}')
        try:
            with self._writer() as session:
                row = self._scope(session, ref)
                if row.allow_identifiers and fields.get(
                        'allow_identifiers') is False:
                    users = self._groups_using(session, lambda d: any(
                        p.scope == row.name and p.identifier is not None
                        for p in d.policies))
                    if users:
                        raise Conflict(
                            f'server groups {", ".join(users)} target '
                            f'domains of scope {row.name}; change their '
                            'policies before disallowing identifiers')
                for key, value in fields.items():
                    setattr(row, key, value)
                session.flush()
                return _scope_record(row)
        except db_exc.DBDuplicateEntry:
            raise Conflict(f'a policy scope named {fields.get("name")} '
                           'exists already')

    def delete_scope(self, ref: str) -> None:
        """:raises Conflict: a stored group has a policy or rule on it."""
        with self._writer() as session:
            # locked: a group written meanwhile waits, then finds it gone
            row = self._scope(session, ref, lock=True)
            users = self._groups_using(session, lambda d: row.name in
                                       d.scopes)
            if users:
                raise Conflict(f'scope {row.name} is used by server groups '
                               f'{", ".join(users)}; change their policies '
                               'first')
            session.delete(row)

    @staticmethod
    def _groups_using(session, predicate) -> typing.List[str]:
        rows = session.scalars(sa.select(models.ScopedGroup).order_by(
            models.ScopedGroup.uuid))
        return [row.uuid for row in rows if predicate(
            policy.parse_document(jsonutils.loads(row.document)))]

    def add_aggregate(self, ref: str, aggregate_uuid: str,
                      check: typing.Optional[typing.Callable[
                          [typing.List[str]], None]] = None
                      ) -> records.ScopeRecord:
        """Make an aggregate a domain of the scope.

        :param check: called with the scope's current aggregates while the
            scope's row is locked, inside the writing transaction; raises
            to refuse (the host-overlap check), so that two changes of one
            scope at once are checked one after the other.
        :raises Conflict: the aggregate is a domain of a scope already.
        """
        aggregate_uuid = canonical_uuid(aggregate_uuid)
        try:
            with self._writer() as session:
                row = self._scope(session, ref, lock=True)
                current = [a.aggregate_uuid for a in row.aggregates]
                if aggregate_uuid in current:
                    raise Conflict(f'aggregate {aggregate_uuid} is a domain '
                                   f'of scope {row.name} already')
                if check is not None:
                    check(current)
                session.add(models.PolicyScopeAggregate(
                    scope_id=row.id, aggregate_uuid=aggregate_uuid))
                session.flush()
                session.refresh(row)
                return _scope_record(row)
        except db_exc.DBDuplicateEntry:
            owner = self._owner(aggregate_uuid)
            raise Conflict(f'aggregate {aggregate_uuid} is a domain of '
                           f'scope {owner} already')

    def _owners(self, aggregates: typing.Sequence[str]
                ) -> typing.List[typing.Tuple[str, str]]:
        """(aggregate, scope name) of those already a domain of a scope:
        one query however many aggregates."""
        if not aggregates:
            return []
        with self._reader() as session:
            return sorted(session.execute(
                sa.select(models.PolicyScopeAggregate.aggregate_uuid,
                          models.PolicyScope.name).join(
                    models.PolicyScope).where(
                    models.PolicyScopeAggregate.aggregate_uuid.in_(
                        list(aggregates)))).all())

    def _owner(self, aggregate_uuid: str) -> str:
        with self._reader() as session:
            return session.scalars(
                sa.select(models.PolicyScope.name).join(
                    models.PolicyScopeAggregate).where(
                    models.PolicyScopeAggregate.aggregate_uuid ==
                    aggregate_uuid)).first()

    def remove_aggregate(self, ref: str, aggregate_uuid: str
                         ) -> records.ScopeRecord:
        """:raises NotFound: the aggregate is not a domain of the scope."""
        aggregate_uuid = canonical_uuid(aggregate_uuid)
        with self._writer() as session:
            row = self._scope(session, ref, lock=True)
            link = next((a for a in row.aggregates
                         if a.aggregate_uuid == aggregate_uuid), None)
            if link is None:
                raise NotFound(f'aggregate {aggregate_uuid} is not a domain '
                               f'of scope {row.name}')
            users = self._groups_using(session, lambda d: any(
                p.scope == row.name and p.identifier == aggregate_uuid
                for p in d.policies))
            if users:
                raise Conflict(f'server groups {", ".join(users)} target '
                               f'aggregate {aggregate_uuid}; change their '
                               'policies first')
            row.aggregates.remove(link)
            session.flush()
            return _scope_record(row)

    # -- groups ----------------------------------------------------------

    @staticmethod
    def _group(session, uuid: str, lock: bool = False) -> models.ScopedGroup:
        query = sa.select(models.ScopedGroup).where(
            models.ScopedGroup.uuid == canonical_uuid(uuid))
        if lock:
            query = query.with_for_update()
        row = session.scalars(query).first()
        if row is None:
            raise NotFound(f'server group {uuid} has no scoped policies')
        return row

    @staticmethod
    def _hold_scopes(session, document: policy.PolicyDocument) -> None:
        """Lock the rows of the scopes ``document`` names until commit, and
        check they (and the domains its policies target) still exist: a
        scope or domain deleted meanwhile leaves no group on it.

        :raises Conflict: naming the scope or domain that is gone.
        """
        names = sorted(document.scopes - {policy.HOST_SCOPE})
        if not names:
            return
        rows = {row.name: row for row in session.scalars(
            sa.select(models.PolicyScope).where(
                models.PolicyScope.name.in_(names)).with_for_update())}
        for name in names:
            if name not in rows:
                raise Conflict(f'scope {name} does not exist (any more)')
        for pol in document.policies:
            if pol.identifier is not None and pol.scope in rows and \
                    pol.identifier not in {a.aggregate_uuid for a in
                                           rows[pol.scope].aggregates}:
                raise Conflict(f'{pol.type.value}:{pol.scope}: the targeted '
                               'domain is no domain of the scope (any more)')

    def create_group(self, uuid: str, project_id: str,
                     document: policy.PolicyDocument,
                     name: typing.Optional[str] = None,
                     user_id: typing.Optional[str] = None,
                     check_scopes: bool = True) -> records.GroupRecord:
        """Save the scoped policies of a Nova server group.

        :param check_scopes: the scopes and targeted domains must exist in
            the store, checked under their rows' locks (the simulator, whose
            scopes come from aggregate metadata, says False).
        :raises Conflict: the group has scoped policies already, or a
            scope or targeted domain is gone.
        :raises NotFound: the group has scoped policies in another project
            than ``project_id``: answered as a group that does not exist,
            so that no project learns of another's groups.
        """
        uuid = canonical_uuid(uuid)
        try:
            with self._writer() as session:
                if check_scopes:
                    self._hold_scopes(session, document)
                row = models.ScopedGroup(
                    uuid=uuid, project_id=project_id, user_id=user_id,
                    name=name, document=jsonutils.dumps(document.to_dict()))
                session.add(row)
                session.flush()
                return _group_record(row)
        except db_exc.DBDuplicateEntry:
            if self.get_group(uuid).project_id != project_id:
                raise NotFound(f'server group {uuid} not found')
            raise Conflict(f'server group {uuid} has scoped policies '
                           'already; update them instead')

    def update_group(self, uuid: str,
                     document: typing.Optional[policy.PolicyDocument] = None,
                     name: typing.Optional[str] = None,
                     check_scopes: bool = True) -> records.GroupRecord:
        """Change the name and/or policies; members are not re-checked.

        :raises NotFound: no such group.
        """
        with self._writer() as session:
            row = self._group(session, uuid)
            if name is not None:
                row.name = name
            if document is not None:
                if check_scopes:
                    self._hold_scopes(session, document)
                row.document = jsonutils.dumps(document.to_dict())
            session.flush()
            return _group_record(row)

    def get_group(self, uuid: str) -> records.GroupRecord:
        with self._reader() as session:
            return _group_record(self._group(session, uuid))

    def list_groups(self, project_id: typing.Optional[str] = None
                    ) -> typing.List[records.GroupRecord]:
        with self._reader() as session:
            query = sa.select(models.ScopedGroup).order_by(
                models.ScopedGroup.id)
            if project_id is not None:
                query = query.where(
                    models.ScopedGroup.project_id == project_id)
            return [_group_record(r) for r in session.scalars(query)]

    def delete_group(self, uuid: str) -> None:
        with self._writer() as session:
            session.delete(self._group(session, uuid))

    @staticmethod
    def _locked_groups(session, uuids: typing.Iterable[str]
                       ) -> typing.Dict[str, models.ScopedGroup]:
        """The stored groups among ``uuids`` (canonical), their rows
        locked until commit in one statement, so in the same order
        whoever locks them: two writers of the same two groups wait for
        each other instead of deadlocking."""
        return {row.uuid: row for row in session.scalars(
            sa.select(models.ScopedGroup).where(
                models.ScopedGroup.uuid.in_(sorted(uuids))).order_by(
                models.ScopedGroup.id).with_for_update())}

    def add_member(self, uuid: str, instance_uuid: str,
                   max_members: typing.Optional[int] = None,
                   booted_in: typing.Optional[str] = None
                   ) -> records.GroupRecord:
        """Add an instance to a group; policies are not enforced here. An
        instance Nova booted into the group and excluded from its scoped
        policies (:meth:`remove_member`) counts again: its exclusion goes.

        :param max_members: the deployer's cap on group size (the members
            added through the API; Nova's own do not count).
        :param booted_in: the server group Nova booted the instance into,
            when known (the policy service asks Nova).
        :raises NotFound: the group has no scoped policies.
        :raises Conflict: it is a member of this or another group already
            (added through the API, or booted by Nova into a group with
            scoped policies that do not exclude it), or the group is full.
        """
        instance_uuid = canonical_uuid(instance_uuid)
        groups = {canonical_uuid(uuid)}
        if booted_in is not None:
            booted_in = canonical_uuid(booted_in)
            groups.add(booted_in)
        try:
            with self._writer() as session:
                # the rows stay locked until commit: adders to one group
                # count its members one after the other, and an instance
                # booted into another group is checked against that
                # group's exclusions as they stand
                locked = self._locked_groups(session, groups)
                row = locked.get(canonical_uuid(uuid))
                if row is None:
                    raise NotFound(f'server group {uuid} has no scoped '
                                   'policies')
                added = session.scalars(
                    sa.select(models.ScopedGroupMember.id).where(
                        models.ScopedGroupMember.instance_uuid ==
                        instance_uuid)).first()
                elsewhere = locked.get(booted_in) if (
                    booted_in != row.uuid) else None
                if added is not None or (
                        elsewhere is not None and instance_uuid not in
                        {e.instance_uuid for e in elsewhere.exclusions}):
                    # never name the group: it may be another project's
                    raise Conflict(f'instance {instance_uuid} is a member '
                                   'of a server group already')
                excluded = next((e for e in row.exclusions
                                 if e.instance_uuid == instance_uuid), None)
                if excluded is not None:
                    row.exclusions.remove(excluded)
                elif booted_in == row.uuid:
                    raise Conflict(f'instance {instance_uuid} is a member '
                                   f'of server group {row.uuid} already')
                elif (max_members is not None
                        and len(row.members) >= max_members):
                    raise Conflict(f'server group {uuid} has '
                                   f'{len(row.members)} members, the most '
                                   'allowed ([scoped_policies_api] '
                                   'max_group_members)')
                else:
                    session.add(models.ScopedGroupMember(
                        group_id=row.id, instance_uuid=instance_uuid))
                session.flush()
                session.refresh(row)
                return _group_record(row)
        except db_exc.DBDuplicateEntry:
            raise Conflict(f'instance {instance_uuid} is a member of a '
                           'server group already')

    def remove_member(self, uuid: str, instance_uuid: str,
                      booted: typing.Collection[str] = ()
                      ) -> records.GroupRecord:
        """Take an instance out of a group's scoped policies: one added
        through the API leaves the group; one Nova booted into it is
        recorded as excluded (Nova keeps it in its group; the scheduler
        and the audit no longer count it).

        :param booted: the group's members as Nova lists them (none when
            the policy service cannot ask Nova).
        :raises NotFound: the instance is neither (or excluded already).
        """
        instance_uuid = canonical_uuid(instance_uuid)
        booted = {canonical_uuid(b) for b in booted}
        try:
            with self._writer() as session:
                row = self._group(session, uuid)
                member = next((m for m in row.members
                               if m.instance_uuid == instance_uuid), None)
                if member is not None:
                    row.members.remove(member)
                excluded = instance_uuid in {e.instance_uuid
                                             for e in row.exclusions}
                if instance_uuid in booted and not excluded:
                    row.exclusions.append(models.ScopedGroupExclusion(
                        instance_uuid=instance_uuid))
                elif member is None:
                    raise NotFound(f'instance {instance_uuid} is not a '
                                   f'member of server group {uuid}')
                session.flush()
                return _group_record(row)
        except db_exc.DBDuplicateEntry:   # excluded meanwhile
            raise NotFound(f'instance {instance_uuid} is not a member of '
                           f'server group {uuid}')

    # -- for the scheduler -----------------------------------------------

    def topology(self, aggregates: typing.Iterable[topo.AggregateInfo]
                 ) -> topo.Topology:
        """The stored scopes as the engine's Topology.

        :param aggregates: the host aggregates (from nova or Placement);
            stored domains missing there are reported.
        """
        return topo.from_aggregates(aggregates, self.list_scopes())
