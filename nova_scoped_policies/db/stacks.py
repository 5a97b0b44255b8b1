"""Stack decisions in the policy store: typed records in and out.

A decision is written once, after its holds exist in Placement; later
changes are per server (held -> booted or released) or of the lease.
"""

import dataclasses
import datetime
import typing

from oslo_serialization import jsonutils
import sqlalchemy as sa

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import models

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
    :param status: as stored: reserved, confirmed, or expired (the lease
        ran out while servers were held; the reaper released them). See
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
                    str, typing.Dict[str, int]]]) -> StackRecord:
    """The record of a decision just held, as the policy service and the
    simulator store it.

    :param hold: the hold (``placement.holds.Hold``: project, user, hold
        consumers, end of the lease).
    :param assignments: server name -> decided host.
    :param resources: server name -> (its host's provider, what is held),
        as ``stacks.service.held_resources`` gives them.
    """
    return StackRecord(
        id, name, hold.project_id, hold.user_id, RESERVED, lease_seconds,
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


class StackStore:
    """Stack decisions in the policy store's database.

    :param store: the policy store (its engine and transactions).
    """

    def __init__(self, store: store_api.PolicyStore) -> None:
        self._store = store

    @staticmethod
    def _row(session, uuid: str) -> models.ScopedStack:
        row = session.scalars(sa.select(models.ScopedStack).where(
            models.ScopedStack.uuid == store_api.canonical_uuid(uuid))
        ).first()
        if row is None:
            raise store_api.NotFound(f'stack decision {uuid} not found')
        return row

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
            return [_record(r) for r in session.scalars(query)]

    def delete(self, uuid: str) -> None:
        with self._store._writer() as session:
            session.delete(self._row(session, uuid))

    def update(self, uuid: str, status: typing.Optional[str] = None,
               expires_at: typing.Optional[datetime.datetime] = None,
               servers: typing.Iterable[str] = (),
               state: typing.Optional[str] = None,
               only_from: typing.Optional[str] = None) -> StackRecord:
        """Change the status, the lease or the state of some servers (their
        hold consumer is dropped as they leave ``held``).

        :param only_from: change only servers currently in this state.
        """
        names = set(servers)
        with self._store._writer() as session:
            row = self._row(session, uuid)
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

        :raises NotFound: no such decision or server.
        """
        with self._store._writer() as session:
            row = self._row(session, uuid)
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

    def expired(self, now: datetime.datetime) -> typing.List[StackRecord]:
        """Decisions whose lease ran out and that still hold servers."""
        with self._store._reader() as session:
            query = sa.select(models.ScopedStack).where(
                models.ScopedStack.expires_at <= _naive(now)).where(
                models.ScopedStack.servers.any(
                    models.ScopedStackServer.state == HELD))
            return [_record(r) for r in session.scalars(query)]
