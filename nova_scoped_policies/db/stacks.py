"""Stack decisions in the policy store: typed records in and out.

A decision is written once, *before* its holds are written in Placement,
as ``holding`` (hidden from readers, with the hold consumers it is about
to write and a short deadline); it becomes ``reserved`` once Placement
confirmed the holds (:meth:`StackStore.held`), and the reaper releases a
``holding`` decision whose deadline passed: a hold in Placement never
exists without its record. Later changes are per server (held -> booted
or released) or of the lease.

Every change locks the decision's row first (``SELECT ... FOR UPDATE`` on
PostgreSQL and MariaDB), so that changes of several API processes to one
decision run one after the other; a change to a decision another request
deleted meanwhile raises :class:`Gone`.
"""

import contextlib
import dataclasses
import datetime
import typing

from oslo_serialization import jsonutils
import sqlalchemy as sa
from sqlalchemy.orm import exc as orm_exc

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import models

HOLDING = 'holding'
HELD = 'held'
BOOTED = 'booted'
RELEASED = 'released'
RESERVED = 'reserved'
CONFIRMED = 'confirmed'
EXPIRED = 'expired'
LIVE = 'live'


@dataclasses.dataclass
class StackServer:
    """One server of a decision.

    :param name: the server's name in the stack.
    :param host: the decided compute host.
    :param provider: its resource provider uuid.
    :param resources: what is held for it.
    :param consumer: the hold consumer uuid while held, else None.
    :param state: held, booted or released.
    :param instance_uuid: the instance booted for it, once one is.
    """

    name: str
    host: str
    provider: str
    resources: typing.Dict[str, int]
    consumer: typing.Optional[str]
    state: str = HELD
    instance_uuid: typing.Optional[str] = None


@dataclasses.dataclass
class StackRecord:
    """A stored stack decision.

    :param id: the decision id (the ``scoped_plan`` hint).
    :param name: the stack's name.
    :param project_id: the tenant.
    :param user_id: the user who decided.
    :param status: as stored: holding (its holds are being written;
        never shown), reserved, confirmed, or expired (the lease ran out
        while servers were held; the reaper released them). See
        :attr:`phase` for what a reader is told.
    :param lease_seconds: the lease's length.
    :param expires_at: end of the lease (UTC, naive in the database).
    :param seconds: how long the decision took.
    :param document: the stack document as given.
    :param servers: name -> server, in the stack's order.
    """

    id: str
    name: str
    project_id: str
    user_id: str
    status: str
    lease_seconds: int
    expires_at: datetime.datetime
    seconds: float
    document: dict
    servers: typing.Dict[str, StackServer]

    @property
    def phase(self) -> str:
        """Where the decision is in its life (stack-document.md):
        ``reserved`` while servers are held under the lease, ``expired``
        when the lease ran out before every server was booted or the
        decision confirmed (what was held is released), ``live`` once
        servers were booted and none is held any more (their policies hold
        until the stack is deleted), ``confirmed`` when confirmed with no
        server booted."""
        if self.status == EXPIRED:
            return EXPIRED
        if self.held:
            return RESERVED
        if any(s.state == BOOTED for s in self.servers.values()):
            return LIVE
        return self.status

    def phase_at(self, now: datetime.datetime) -> str:
        """:attr:`phase` as a reader at ``now`` is told it: ``expired`` as
        soon as the lease ran out with servers still held, before the
        reaper has released them (a read never writes; the reaper, or the
        next request that changes a stack, releases them)."""
        if self.held and self.status == RESERVED and \
                _utc(self.expires_at) <= now:
            return EXPIRED
        return self.phase

    @property
    def instances(self) -> typing.Dict[str, str]:
        """server name -> the instance booted for it, for the booted
        servers that have one (those a repair may move)."""
        return {n: s.instance_uuid for n, s in self.servers.items()
                if s.state == BOOTED and s.instance_uuid}

    @property
    def held(self) -> typing.Dict[str, str]:
        """server name -> hold consumer, for servers still held."""
        return {n: s.consumer for n, s in self.servers.items()
                if s.state == HELD and s.consumer}


def held_record(id: str, name: str, document: dict, hold,
                lease_seconds: int, seconds: float,
                assignments: typing.Mapping[str, str],
                resources: typing.Mapping[str, typing.Tuple[
                    str, typing.Dict[str, int]]],
                status: str = RESERVED) -> StackRecord:
    """The record of a decision just held (or about to be), as the policy
    service and the simulator store it.

    :param hold: the hold (``placement.holds.Hold``: project, user, hold
        consumers, end of the lease).
    :param status: ``holding`` for a record written before its holds.
    :param assignments: server name -> decided host.
    :param resources: server name -> (its host's provider, what is held),
        as ``stacks.service.held_resources`` gives them.
    """
    return StackRecord(
        id, name, hold.project_id, hold.user_id, status, lease_seconds,
        hold.expires_at, seconds, document,
        {n: StackServer(n, assignments[n], provider, amounts,
                        hold.consumers[n])
         for n, (provider, amounts) in resources.items()})


def _utc(value: datetime.datetime) -> datetime.datetime:
    return value.replace(tzinfo=datetime.timezone.utc) \
        if value.tzinfo is None else value


def _naive(value: datetime.datetime) -> datetime.datetime:
    return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def _record(row: models.ScopedStack) -> StackRecord:
    return StackRecord(
        row.uuid, row.name, row.project_id, row.user_id, row.status,
        row.lease_seconds, _utc(row.expires_at), row.decision_seconds,
        jsonutils.loads(row.document),
        {s.name: StackServer(s.name, s.host, s.provider_uuid,
                             jsonutils.loads(s.resources), s.consumer_uuid,
                             s.state, s.instance_uuid)
         for s in row.servers})


class Gone(store_api.Conflict):
    """The decision was deleted by another request after this one read
    it (a race lost; the API answers 409)."""

    def __init__(self, uuid: str) -> None:
        super().__init__(f'stack decision {uuid}: found deleted by another '
                         'request meanwhile')


class StackStore:
    """Stack decisions in the policy store's database.

    :param store: the policy store (its engine and transactions).
    """

    def __init__(self, store: store_api.PolicyStore) -> None:
        self._store = store

    @staticmethod
    def _row(session, uuid: str, lock: bool = False,
             holding: bool = False) -> models.ScopedStack:
        """The decision's row; locked (``FOR UPDATE``) for a change.

        :param holding: a ``holding`` decision is found too.
        :raises NotFound: no such (shown) decision.
        """
        query = sa.select(models.ScopedStack).where(
            models.ScopedStack.uuid == store_api.canonical_uuid(uuid))
        if not holding:
            query = query.where(models.ScopedStack.status != HOLDING)
        if lock:   # SELECT ... FOR UPDATE (PostgreSQL, MariaDB)
            query = query.with_for_update()
        row = session.scalars(query).first()
        if row is None:
            raise store_api.NotFound(f'stack decision {uuid} not found')
        return row

    @contextlib.contextmanager
    def _changing(self, uuid: str, holding: bool = False):
        """A writer transaction with the decision's row locked: (session,
        row). A decision gone meanwhile raises :class:`Gone`."""
        try:
            with self._store._writer() as session:
                try:
                    row = self._row(session, uuid, lock=True,
                                    holding=holding)
                except store_api.NotFound:
                    raise Gone(uuid) from None
                yield session, row
        except orm_exc.StaleDataError:
            raise Gone(uuid) from None

    def create(self, record: StackRecord) -> StackRecord:
        with self._store._writer() as session:
            row = models.ScopedStack(
                uuid=record.id, name=record.name,
                project_id=record.project_id, user_id=record.user_id,
                status=record.status, lease_seconds=record.lease_seconds,
                expires_at=_naive(record.expires_at),
                decision_seconds=record.seconds,
                document=jsonutils.dumps(record.document))
            row.servers = [models.ScopedStackServer(
                name=s.name, host=s.host, provider_uuid=s.provider,
                resources=jsonutils.dumps(s.resources),
                consumer_uuid=s.consumer, state=s.state,
                instance_uuid=s.instance_uuid)
                for s in record.servers.values()]
            session.add(row)
            session.flush()
            return _record(row)

    def get(self, uuid: str) -> StackRecord:
        """:raises NotFound:"""
        with self._store._reader() as session:
            return _record(self._row(session, uuid))

    def list(self, project_id: typing.Optional[str] = None
             ) -> typing.List[StackRecord]:
        with self._store._reader() as session:
            query = sa.select(models.ScopedStack).order_by(
                models.ScopedStack.id)
            if project_id is not None:
                query = query.where(
                    models.ScopedStack.project_id == project_id)
            return [_record(r) for r in session.scalars(
                query.where(models.ScopedStack.status != HOLDING))]

    def delete(self, uuid: str, holding: bool = False) -> None:
        """:raises Gone: another request deleted it meanwhile."""
        with self._changing(uuid, holding) as (session, row):
            session.delete(row)

    def held(self, uuid: str, expires_at: datetime.datetime
             ) -> StackRecord:
        """Placement confirmed the holds of a ``holding`` decision: it is
        ``reserved`` until ``expires_at``.

        :raises Gone: the reaper released it meanwhile (the holds were
            written after its deadline).
        """
        with self._changing(uuid, holding=True) as (session, row):
            if row.status != HOLDING:
                raise Gone(uuid)
            row.status = RESERVED
            row.expires_at = _naive(expires_at)
            session.flush()
            return _record(row)

    def update(self, uuid: str, status: typing.Optional[str] = None,
               expires_at: typing.Optional[datetime.datetime] = None,
               servers: typing.Iterable[str] = (),
               state: typing.Optional[str] = None,
               only_from: typing.Optional[str] = None,
               if_held: bool = False) -> StackRecord:
        """Change the status, the lease or the state of some servers (their
        hold consumer is dropped as they leave ``held``).

        :param only_from: change only servers currently in this state.
        :param if_held: change nothing unless a server is still held (the
            reaper: another request confirmed or booted it meanwhile).
        :raises Gone: another request deleted it meanwhile.
        """
        names = set(servers)
        with self._changing(uuid) as (session, row):
            if if_held and not any(s.state == HELD for s in row.servers):
                return _record(row)
            if status is not None:
                row.status = status
            if expires_at is not None:
                row.expires_at = _naive(expires_at)
            for server in row.servers:
                if server.name in names and state is not None and (
                        only_from is None or server.state == only_from):
                    server.state = state
                    if state != HELD:
                        server.consumer_uuid = None
            session.flush()
            return _record(row)

    def boot(self, uuid: str, name: str,
             instance_uuid: typing.Optional[str]) -> StackRecord:
        """Server ``name`` is being booted as ``instance_uuid``: it leaves
        ``held`` (its hold consumer is dropped) for ``booted`` and
        remembers the instance (a later boot for the same server, after
        the first instance was deleted, replaces it). A released server
        stays released.

        :raises NotFound: no such server.
        :raises Gone: another request deleted the decision meanwhile.
        """
        with self._changing(uuid) as (session, row):
            server = next((s for s in row.servers if s.name == name), None)
            if server is None:
                raise store_api.NotFound(
                    f'stack decision {uuid} has no server {name}')
            if server.state == RELEASED:
                return _record(row)
            if server.state == HELD:
                server.state = BOOTED
                server.consumer_uuid = None
            if instance_uuid is not None:
                server.instance_uuid = instance_uuid
            session.flush()
            return _record(row)

    def known_consumers(self, consumers: typing.AbstractSet[str]
                        ) -> typing.Set[str]:
        """Of ``consumers``, the hold consumers a stored decision (shown
        or ``holding``) still has."""
        found: typing.Set[str] = set()
        ordered = sorted(consumers)
        with self._store._reader() as session:
            for start in range(0, len(ordered), 500):
                found.update(session.scalars(sa.select(
                    models.ScopedStackServer.consumer_uuid).where(
                    models.ScopedStackServer.consumer_uuid.in_(
                        ordered[start:start + 500]))))
        return found

    def expired(self, now: datetime.datetime) -> typing.List[StackRecord]:
        """Decisions whose lease ran out and that still hold servers, and
        ``holding`` decisions whose deadline passed (their holds were
        never confirmed: the reaper releases them and deletes them)."""
        with self._store._reader() as session:
            query = sa.select(models.ScopedStack).where(
                models.ScopedStack.expires_at <= _naive(now)).where(
                models.ScopedStack.servers.any(
                    models.ScopedStackServer.state == HELD))
            return [_record(r) for r in session.scalars(query)]
