"""Repair tasks in the policy store on SQLite: claims that keep two tasks
off one server (across processes), progress, cancel, interrupted tasks
and their retention.

tests/functional/api/test_store_backends.py runs these tests again on
PostgreSQL and MariaDB."""

import datetime
import multiprocessing
import socket
import subprocess
import sys
import time

import pytest
import sqlalchemy as sa

from nova_scoped_policies.db import api
from nova_scoped_policies.db import migration
from nova_scoped_policies.db import models
from nova_scoped_policies.db import repair_tasks as task_db
from tests import db_backends

S1 = '00000000-0000-4000-8000-0000000000c1'
S2 = '00000000-0000-4000-8000-0000000000c2'
S3 = '00000000-0000-4000-8000-0000000000c3'


@pytest.fixture(params=['sqlite'])
def store(request, tmp_path):
    url, drop = db_backends.create(request.param, tmp_path)
    store = api.PolicyStore(url)
    migration.upgrade(store.engine)
    yield store
    store.engine.dispose()
    drop()


def moves(*servers):
    return [{'server': s, 'from': 'h1', 'to': 'h2'} for s in servers]


def _age(store, id, **fields):
    with store.engine.begin() as conn:
        conn.execute(sa.update(models.RepairTask).where(
            models.RepairTask.uuid == id).values(**fields))


def test_a_task_claims_its_servers_until_it_ends(store):
    tasks = task_db.TaskStore(store)
    first = tasks.create('admin', 'server_group g', moves(S1, S2))
    assert first.status == task_db.RUNNING
    with pytest.raises(task_db.Busy) as caught:
        tasks.create('admin', 'server_group h', moves(S3, S2))
    assert (caught.value.server, caught.value.task) == (S2, first.id)
    assert f'server {S2} is moved by the running repair task' in str(
        caught.value)
    # nothing half-written: S3 is free
    other = tasks.create('admin', 'server_group h', moves(S3))
    tasks.finish(other.id, task_db.APPLIED, moves(S3))
    # progress and cancel
    assert tasks.progress(first.id, moves(S1), moves(S2)) is False
    shown = tasks.get(first.id)
    assert (shown.done, shown.current) == (moves(S1), moves(S2))
    assert tasks.request_cancel(first.id).cancel
    assert tasks.progress(first.id, moves(S1, S2), []) is True
    ended = tasks.finish(first.id, task_db.CANCELLED, moves(S1, S2))
    assert ended.status == task_db.CANCELLED and ended.finished_at
    # an ended task cancels nothing; its servers are free again
    assert tasks.request_cancel(first.id).status == task_db.CANCELLED
    tasks.create('admin', 'server_group h', moves(S1, S2))
    assert [t.target for t in tasks.list()][-1] == 'server_group g'
    with pytest.raises(api.NotFound):
        tasks.get('00000000-0000-4000-8000-000000000000')


def test_a_task_whose_process_is_gone_is_interrupted(store):
    # a process of this host that no longer runs started it
    gone = task_db.TaskStore(store, owner=f'{socket.gethostname()}:'
                             '4194999:1')
    task = gone.create('admin', 'stack s', moves(S1, S2))
    gone.progress(task.id, moves(S1), moves(S2))
    # another host's task with a fresh heartbeat is left running
    away = task_db.TaskStore(store, owner='elsewhere:1:1').create(
        'admin', 'stack t', moves(S3))
    found = task_db.TaskStore(store).interrupt_orphans(120)
    assert found == [task.id]
    shown = task_db.TaskStore(store).get(task.id)
    assert shown.status == task_db.INTERRUPTED
    # what it was running may still run in Nova: said
    assert shown.done == moves(S1) and shown.current == moves(S2)
    # its servers are free for a new plan's task
    task_db.TaskStore(store).create('admin', 'stack s', moves(S2))
    # no heartbeat for longer than the bound: interrupted too
    _age(store, away.id, beat_at=datetime.datetime.utcnow()
         - datetime.timedelta(seconds=300))
    assert task_db.TaskStore(store).interrupt_orphans(120) == [away.id]


def test_tasks_are_kept_for_the_days_asked(store):
    tasks = task_db.TaskStore(store)
    old = tasks.create('admin', 'all', moves(S1))
    tasks.finish(old.id, task_db.APPLIED, moves(S1))
    new = tasks.create('admin', 'all', moves(S2))
    tasks.finish(new.id, task_db.APPLIED, moves(S2))
    running = tasks.create('admin', 'all', moves(S3))
    _age(store, old.id, finished_at=datetime.datetime.utcnow()
         - datetime.timedelta(days=8))
    _age(store, running.id, created_at=datetime.datetime.utcnow()
         - datetime.timedelta(days=30))
    assert tasks.purge(7) == 1
    assert {t.id for t in tasks.list()} == {new.id, running.id}


def _claim(url, barrier, found):
    store = api.PolicyStore(url)
    barrier.wait()
    try:
        task = task_db.TaskStore(store).create('admin', 'all',
                                               moves(S1, S2))
        found.put(task.id)
    except task_db.Busy as exc:
        found.put(f'busy {exc.server}')
    except Exception as exc:  # said to the test, which fails with it
        found.put(f'error {exc!r}')
    finally:
        store.engine.dispose()


def two_processes_never_claim_one_server(store):
    """Several API processes start tasks on the same servers at once: the
    database keeps exactly one. On the database servers only
    (tests/functional/api/test_store_backends.py): several processes
    writing one SQLite file wait on its lock, which is not how a cloud
    runs the API."""
    context = multiprocessing.get_context('spawn')
    barrier = context.Barrier(4)
    found = context.Queue()
    # the store's URL without the connect_timeout PolicyStore adds
    url = store.engine.url.difference_update_query(
        ['connect_timeout']).render_as_string(hide_password=False)
    workers = [context.Process(target=_claim, args=(url, barrier, found))
               for _ in range(4)]
    for worker in workers:
        worker.start()
    results = [found.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(60)
    busy = [r for r in results if r.startswith('busy ')]
    assert len(busy) == 3, results
    assert {r.split()[1] for r in busy} <= {S1, S2}
    (winner,) = set(results) - set(busy)
    assert task_db.TaskStore(store).get(winner).status == task_db.RUNNING


def test_a_killed_process_not_yet_reaped_is_gone():
    # a process killed outright stays a zombie until its parent reaps it:
    # its task's owner is gone all the same
    child = subprocess.Popen([sys.executable, '-c', 'import time; '
                              'time.sleep(60)'])
    try:
        owner = f'{socket.gethostname()}:{child.pid}:' \
            f'{task_db._started(child.pid)}'
        assert task_db._alive(owner)
        child.kill()
        with open(f'/proc/{child.pid}/stat') as stat:
            while stat.read().rsplit(')', 1)[1].split()[0] != 'Z':
                time.sleep(0.01)
                stat.seek(0)
        assert not task_db._alive(owner)
    finally:
        child.kill()
        child.wait()
    assert not task_db._alive(owner)
