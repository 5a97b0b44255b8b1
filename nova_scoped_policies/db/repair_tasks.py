"""Repair tasks in the policy store: typed records in and out.

A task is a repair plan carried out in the background by one API process
(``POST /repairs/apply`` from microversion 1.4). Its row says how far it
got; the servers it moves are claimed in ``repair_task_servers`` (the
server's uuid is the primary key), so two tasks never move the same
server, whichever API process started them. The claims go when the task
ends.

A task's *owner* is the API process that runs it (``host:pid:start``);
the process writes a heartbeat while it runs. A task whose owner is gone
(the same host with no such process, or no heartbeat for
``stale_seconds``) is *interrupted*: its claims go, its moves done stay
said, and so do those it was running then.
"""

import dataclasses
import datetime
import os
import socket
import time
import typing
import uuid as uuidlib

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
import sqlalchemy as sa

from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import models

RUNNING = 'running'
APPLIED = 'applied'
STOPPED = 'stopped'
CANCELLED = 'cancelled'
INTERRUPTED = 'interrupted'
ENDED = (APPLIED, STOPPED, CANCELLED, INTERRUPTED)


def process_owner() -> str:
    """This process as a task's owner: ``host:pid:start``."""
    return f'{socket.gethostname()}:{os.getpid()}:{_started(os.getpid())}'


GONE = ('Z', 'X')
"""States of /proc/PID/stat of a process that has ended: a zombie (killed,
not yet reaped by its parent) or dead."""


def _started(pid: int) -> int:
    """When process ``pid`` of this host started (epoch seconds; now when
    /proc does not say).

    :raises ProcessLookupError: no such process, or one that has ended
        (a zombie its parent has not reaped yet).
    """
    try:
        with open(f'/proc/{pid}/stat') as stat:
            fields = stat.read().rsplit(')', 1)[1].split()
        state, ticks = fields[0], int(fields[19])
        with open('/proc/stat') as stat:
            boot = next(float(line.split()[1]) for line in stat
                        if line.startswith('btime'))
    except FileNotFoundError:
        raise ProcessLookupError(pid)
    except (OSError, ValueError, IndexError, StopIteration):
        return int(time.time())
    if state in GONE:
        raise ProcessLookupError(pid)
    return int(boot + ticks / os.sysconf('SC_CLK_TCK'))


@dataclasses.dataclass
class TaskRecord:
    """A stored repair task.

    :param id: its uuid.
    :param project_id: the project of the administrator who started it.
    :param target: what it repairs (``server_group <uuid>``...).
    :param status: running, applied, stopped, cancelled or interrupted.
    :param moves: the plan's moves, as applied (``server``, ``from``,
        ``to``...).
    :param done: the moves done, in order.
    :param current: the moves running now.
    :param failed: the move that failed and why, or None.
    :param cancel: a cancel was asked: it stops after the running moves.
    :param owner: the API process that runs it.
    :param created_at: when it started (UTC).
    :param finished_at: when it ended (UTC), or None.
    """

    id: str
    project_id: str
    target: str
    status: str
    moves: typing.List[dict]
    done: typing.List[dict]
    current: typing.List[dict]
    failed: typing.Optional[dict]
    cancel: bool
    owner: str
    created_at: datetime.datetime
    finished_at: typing.Optional[datetime.datetime] = None

    def to_dict(self) -> dict:
        return {'id': self.id, 'target': self.target,
                'status': self.status, 'moves': self.moves,
                'done': self.done, 'current': self.current,
                'failed': self.failed, 'cancel_requested': self.cancel,
                'created_at': _iso(self.created_at),
                'finished_at': _iso(self.finished_at)}


def _iso(value: typing.Optional[datetime.datetime]) -> typing.Optional[str]:
    return None if value is None else value.replace(
        tzinfo=None).isoformat() + 'Z'


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def _record(row: models.RepairTask) -> TaskRecord:
    return TaskRecord(
        row.uuid, row.project_id, row.target, row.status,
        jsonutils.loads(row.moves), jsonutils.loads(row.done),
        jsonutils.loads(row.current) if row.current else [],
        jsonutils.loads(row.failed) if row.failed else None,
        bool(row.cancel), row.owner, row.created_at, row.finished_at)


class Busy(store_api.Conflict):
    """A server of the task is moved by another running task.

    :param server: that server.
    :param task: that task's id.
    """

    def __init__(self, server: str, task: str) -> None:
        super().__init__(f'server {server} is moved by the running repair '
                         f'task {task}')
        self.server = server
        self.task = task


class TaskStore:
    """Repair tasks in the policy store.

    :param store: the policy store (``db.api.PolicyStore``).
    :param owner: this process as an owner (tests).
    """

    def __init__(self, store: store_api.PolicyStore,
                 owner: typing.Optional[str] = None) -> None:
        self.store = store
        self.owner = owner or process_owner()

    def create(self, project_id: str, target: str,
               moves: typing.Sequence[dict]) -> TaskRecord:
        """A running task of this process, its servers claimed.

        :raises Busy: a server is moved by another running task.
        """
        servers = sorted({m['server'] for m in moves})
        now = _now()
        try:
            with self.store._writer() as session:
                taken = session.execute(
                    sa.select(models.RepairTaskServer.server_uuid,
                              models.RepairTask.uuid)
                    .join(models.RepairTask, models.RepairTask.id ==
                          models.RepairTaskServer.task_id)
                    .where(models.RepairTaskServer.server_uuid.in_(
                        servers))).first()
                if taken is not None:
                    raise Busy(taken[0], taken[1])
                row = models.RepairTask(
                    uuid=str(uuidlib.uuid4()), project_id=project_id,
                    target=target, status=RUNNING,
                    moves=jsonutils.dumps(list(moves)), done='[]',
                    current=None, failed=None, cancel=False,
                    owner=self.owner, beat_at=now, created_at=now)
                session.add(row)
                session.flush()
                for server in servers:
                    session.add(models.RepairTaskServer(
                        server_uuid=server, task_id=row.id))
                session.flush()
                return _record(row)
        except db_exc.DBDuplicateEntry:
            # another task claimed one of them meanwhile
            found = self._claimant(servers)
            raise Busy(*(found or (servers[0], 'started meanwhile')))

    def _claimant(self, servers):
        with self.store._reader() as session:
            return session.execute(
                sa.select(models.RepairTaskServer.server_uuid,
                          models.RepairTask.uuid)
                .join(models.RepairTask, models.RepairTask.id ==
                      models.RepairTaskServer.task_id)
                .where(models.RepairTaskServer.server_uuid.in_(servers))
            ).first()

    @staticmethod
    def _row(session, id: str) -> models.RepairTask:
        row = session.scalars(sa.select(models.RepairTask).where(
            models.RepairTask.uuid == id)).first()
        if row is None:
            raise store_api.NotFound(f'repair task {id} not found')
        return row

    def get(self, id: str) -> TaskRecord:
        """:raises store_api.NotFound:"""
        with self.store._reader() as session:
            return _record(self._row(session, id))

    def list(self) -> typing.List[TaskRecord]:
        """Every task kept, the newest first."""
        with self.store._reader() as session:
            return [_record(r) for r in session.scalars(
                sa.select(models.RepairTask).order_by(
                    models.RepairTask.created_at.desc(),
                    models.RepairTask.id.desc()))]

    def progress(self, id: str, done: typing.Sequence[dict],
                 current: typing.Sequence[dict]) -> bool:
        """Record the moves done and those running now (and the
        heartbeat); whether a cancel was asked."""
        with self.store._writer() as session:
            row = self._row(session, id)
            row.done = jsonutils.dumps(list(done))
            row.current = jsonutils.dumps(list(current)) if current \
                else None
            row.beat_at = _now()
            return bool(row.cancel)

    def beat(self, id: str) -> bool:
        """The heartbeat; whether a cancel was asked."""
        with self.store._writer() as session:
            row = self._row(session, id)
            row.beat_at = _now()
            return bool(row.cancel)

    def finish(self, id: str, status: str, done: typing.Sequence[dict],
               failed: typing.Optional[dict] = None) -> TaskRecord:
        """End a task: its status, the moves done, its claims released."""
        with self.store._writer() as session:
            row = self._row(session, id)
            self._end(session, row, status, done, failed)
            return _record(row)

    @staticmethod
    def _end(session, row, status, done=None, failed=None,
             running=False) -> None:
        """:param running: the moves running now stay said (a task whose
            process is gone: they may still run in Nova)."""
        row.status = status
        if done is not None:
            row.done = jsonutils.dumps(list(done))
        if not running:
            row.current = None
        row.failed = jsonutils.dumps(failed) if failed else row.failed
        row.finished_at = _now()
        session.execute(sa.delete(models.RepairTaskServer).where(
            models.RepairTaskServer.task_id == row.id))

    def request_cancel(self, id: str) -> TaskRecord:
        """Ask a running task to stop after its running moves (an ended
        one is left as it is).

        :raises store_api.NotFound:
        """
        with self.store._writer() as session:
            row = self._row(session, id)
            if row.status == RUNNING:
                row.cancel = True
            return _record(row)

    def interrupt_orphans(self, stale_seconds: float,
                          alive: typing.Callable[[str], bool] = None
                          ) -> typing.List[str]:
        """Mark interrupted every running task whose owner is gone: a
        process of this host that no longer runs (or this host's earlier
        life), or no heartbeat for ``stale_seconds``. Their claims go,
        their moves done stay, and so do the moves that were running
        (``current``: Nova may still be carrying them out). Returns their
        ids.

        :param alive: owner -> whether it runs (default: a process of
            this host with that pid and start runs; another host's owner
            counts as running until its heartbeat is stale).
        """
        alive = alive or _alive
        oldest = _now() - datetime.timedelta(seconds=stale_seconds)
        found = []
        with self.store._writer() as session:
            rows = session.scalars(sa.select(models.RepairTask).where(
                models.RepairTask.status == RUNNING)
                .with_for_update()).all()
            for row in rows:
                if row.owner == self.owner:
                    continue
                if row.beat_at < oldest or not alive(row.owner):
                    self._end(session, row, INTERRUPTED, running=True)
                    found.append(row.uuid)
        return found

    def purge(self, keep_days: float) -> int:
        """Forget the tasks that ended more than ``keep_days`` ago."""
        oldest = _now() - datetime.timedelta(days=keep_days)
        with self.store._writer() as session:
            return session.execute(sa.delete(models.RepairTask).where(
                models.RepairTask.finished_at.is_not(None),
                models.RepairTask.finished_at < oldest)).rowcount


def _alive(owner: str) -> bool:
    """Whether the owner ``host:pid:start`` runs: on this host, the
    process with that pid that started then (a pid reused since is
    another process); on another host, unknown: True (its heartbeat
    tells)."""
    host, _, rest = owner.partition(':')
    pid, _, started = rest.partition(':')
    if host != socket.gethostname():
        return True
    try:
        return abs(_started(int(pid)) - int(started)) <= 2
    except (ValueError, ProcessLookupError):
        return False
