"""``/repairs``: plan the fewest moves that end every hard violation of a
server group, a stack or (admins) every group and stack, and carry a plan
out through Nova.

``POST /repairs`` reads the cloud (:mod:`nova_scoped_policies.api.repairs`)
and plans with the repair service
(:func:`nova_scoped_policies.repair.service.plan`), the cloud read wide
when the target's own servers do not repair it in one move;
tenants see hosts as surrogates and another project's server as "another
server". ``POST /repairs/apply`` (admins) refuses a plan
whose world changed before any move: the targets' policies, servers and
hosts must be those the plan was made on (its ``fingerprint``), and the
moves must still fit and add no violation on a fresh read of capacity.
It then live-migrates, each move checked by nova-scheduler, at most
``max_parallel`` at once (moves touching different hosts and targets
only), and stops at the first failure, saying what was done. Before
1.4 the answer comes when the moves are done and carries the fingerprint
of the world after them, for the next part of the plan; from 1.4 it is a
repair task (:mod:`nova_scoped_policies.api.repair_tasks`,
``/repairs/tasks``).
"""

import re
import typing

import webob

from nova_scoped_policies.api import microversion
from nova_scoped_policies.api import moves as moves_mod
from nova_scoped_policies.api import policy as api_policy
from nova_scoped_policies.api.policies import repairs as rules
from nova_scoped_policies.api.policies import scopes as scope_rules
from nova_scoped_policies.api import repair_tasks
from nova_scoped_policies.api import repairs
from nova_scoped_policies.api.schemas import repairs as schemas
from nova_scoped_policies.api import util
from nova_scoped_policies.api import visibility
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import repair_tasks as task_db
from nova_scoped_policies.notifications import payloads
from nova_scoped_policies.repair import planner
from nova_scoped_policies.stacks import solver

VERSION = '1.2'
TASKS = '1.4'
"""``POST /repairs/apply`` starts a task (``/repairs/tasks``); plans say
whether they need an administrator."""


def _begin(req: webob.Request, schema: dict):
    if not microversion.require(req.environ, VERSION):
        raise webob.exc.HTTPNotFound(
            explanation='The resource could not be found.')
    context, service = util.env(req)
    data = util.extract_json(req, schema)['repair']
    return context, service, data, repairs.asked(data)


ANOTHER = 'another server'
"""How a tenant's plan names a server of another project."""


def _move(move: planner.Move, read: repairs.Read,
          project: typing.Optional[str] = None) -> dict:
    """A move as the reader sees it; with ``project`` (a tenant), a server
    of another project is only "another server"."""
    hidden = project is not None and \
        read.projects.get(move.server, '') != project
    found = {'server': ANOTHER if hidden else move.server,
             'from': read.host(move.source),
             'to': read.host(move.destination)}
    name = read.names.get(move.server)
    if name and name != move.server and not hidden:
        found['name'] = name
    if move.temporary:
        found['temporary'] = True
    return found


def _plan(service, asked: repairs.Asked, project: str, admin: bool):
    """(the world read, its plan), by the repair service
    (:func:`nova_scoped_policies.api.repairs.plan`)."""
    try:
        return repairs.plan(service, asked, project, admin)
    except solver.SolverUnavailable as exc:
        raise webob.exc.HTTPNotImplemented(explanation=str(exc))


def plan_repair(req: webob.Request) -> webob.Response:
    context, service, data, asked = _begin(req, schemas.PLAN)
    context.can(rules.PLAN_ALL if asked.kind == repairs.ALL else rules.PLAN)
    admin = context.can(scope_rules.REAL_IDS, fatal=False)
    read, found = _plan(service, asked, context.project_id, admin)
    shown = repairs.viewed(read, visibility.viewer(req))
    tenant = None if admin else context.project_id
    others = repairs.others_moved(read, found.moves, context.project_id)
    body = {
        'status': found.status,
        'moves': [_move(m, shown, tenant) for m in found.moves],
        'reason': _reason(found.reason, read, shown),
        'violations': list(planner.violations(shown.problem)),
        'seconds': round(found.seconds, 3),
        'fingerprint': repairs.fingerprint(read.problem, found.moves),
    }
    if microversion.require(req.environ, TASKS):
        # the plan moves servers of other projects: only an
        # administrator may carry it out
        body['needs_administrator'] = bool(others)
    body.update({k: v for k, v in data.items()})
    service.notify(req, 'scoped_repair.plan', payloads.of_repair(
        asked.label, found.status,
        [_move(m, read) for m in found.moves], found.reason))
    return util.json_response(req, {'repair': body})


def _reason(reason: str, read: repairs.Read, shown: repairs.Read) -> str:
    """The planner's reason in the reader's identifiers: every host and
    every domain (name or id) it may name is replaced, as a whole word and
    longest first, by what the reader sees of it."""
    if shown is read or not reason:
        return reason
    names = {h.name: shown.host(h.name) for h in read.problem.hosts}
    real, view = read.problem.topology, shown.problem.topology
    for scope in real.scope_names:
        seen = {d.id: d.name for d in view.domains(scope)}
        for domain in real.domains(scope):
            names[domain.name] = names[domain.id] = seen[domain.id]
    if not names:
        return reason
    words = re.compile('(?<![A-Za-z0-9_-])(' + '|'.join(
        re.escape(n) for n in sorted(names, key=len, reverse=True))
        + ')(?![A-Za-z0-9_-])')
    return words.sub(lambda m: names[m.group(1)], reason)


def apply_repair(req: webob.Request) -> webob.Response:
    context, service, data, asked = _begin(req, schemas.APPLY)
    context.can(rules.APPLY)
    options = service.conf.scoped_policies_api
    most = min(data.get('max_parallel', 1), options.repair_max_parallel)
    if service.nova is None:
        raise webob.exc.HTTPNotImplemented(
            explanation='[nova] is not configured: this service cannot '
            'live-migrate servers')
    moves = _moves(data)
    read = _read_for(service, asked, context.project_id, moves,
                     data['fingerprint'])
    problem = read.problem
    why = planner.replay(problem, moves)
    if why is not None:
        raise _changed(why)
    mover = moves_mod.NovaMoves(service.nova.adapter)
    if microversion.require(req.environ, TASKS):
        return _start_task(req, context, service, asked, read, moves,
                           mover, most)
    service.notify(req, 'scoped_repair.apply.start', payloads.of_repair(
        asked.label, 'started', data['moves']))
    found = repair_tasks.carry(mover, moves, problem, most,
                               options.repair_move_timeout)
    failed = None
    if found.failed is not None:
        move, reason, host = found.failed
        failed = {'move': _move(move, read), 'reason': reason,
                  'host': host}
    done = [_move(m, read) for m in found.done]
    _notify_end(service, req, asked, done, failed)
    after = repairs.read(service, asked, context.project_id, True,
                         wide=bool(problem.kept))
    return util.json_response(req, {'repair': {
        'status': 'stopped' if failed else 'applied',
        'done': done,
        'failed': failed,
        'left': [_move(m, read) for m in found.left],
        'violations': list(planner.violations(after.problem)),
        # the next part of the plan is applied with this one
        'fingerprint': repairs.fingerprint(after.problem, found.left),
    }})


def _notify_end(service, req, asked: repairs.Asked, done: typing.List[dict],
                failed: typing.Optional[dict]) -> None:
    if failed:
        service.notify(req, 'scoped_repair.apply.error', payloads.of_repair(
            asked.label, 'stopped', done, failed['reason']))
    else:
        service.notify(req, 'scoped_repair.apply.end', payloads.of_repair(
            asked.label, 'applied', done))


def _tasks(service) -> task_db.TaskStore:
    """The task store, the tasks ended too long ago forgotten and those
    whose API process is gone marked interrupted."""
    options = service.conf.scoped_policies_api
    tasks = task_db.TaskStore(service.store)
    tasks.purge(options.repair_task_keep_days)
    tasks.interrupt_orphans(options.repair_task_stale_seconds)
    return tasks


def _start_task(req, context, service, asked: repairs.Asked,
                read: repairs.Read, moves: typing.List[planner.Move],
                mover: moves_mod.NovaMoves, most: int) -> webob.Response:
    """202: a task carries the moves out in this process's background;
    409 when another running task moves one of their servers."""
    tasks = _tasks(service)
    shown = [_move(m, read) for m in moves]
    try:
        task = tasks.create(context.project_id, asked.label, shown)
    except task_db.Busy as exc:
        conflict = webob.exc.HTTPConflict(
            explanation=f'{exc}; nothing was moved: wait for it, or cancel '
            'it')
        conflict.error_code = 'scoped_policies.repair_busy'
        raise conflict
    service.notify(req, 'scoped_repair.apply.start', payloads.of_repair(
        asked.label, 'started', shown))

    def ended(record: task_db.TaskRecord) -> None:
        _notify_end(service, req, asked, record.done, record.failed)
    repair_tasks.Runner(
        tasks, task, lambda m: _move(m, read), service.stopping, ended
    ).start(mover, moves, read.problem, most,
            service.conf.scoped_policies_api.repair_move_timeout)
    location = f'{req.application_url}/repairs/tasks/{task.id}'
    resp = util.json_response(req, {'task': task.to_dict()}, status=202)
    resp.headers['Location'] = location
    return resp


def _task_begin(req: webob.Request, action: str):
    """(context, task store) of a ``/repairs/tasks`` request the caller
    may make (on its own project: 403 otherwise)."""
    if not microversion.require(req.environ, TASKS):
        raise webob.exc.HTTPNotFound(
            explanation='The resource could not be found.')
    context, service = util.env(req)
    context.can(action)
    return context, _tasks(service)


def _task(req, context, tasks: task_db.TaskStore, action: str
          ) -> task_db.TaskRecord:
    """The task of the URL, if the caller may act on it: 404 for a caller
    of another project who may not see it, 403 when it may not act."""
    id = util.check_uuid(req.urlvars['id'], 'id')
    try:
        task = tasks.get(id)
    except store_api.NotFound:
        raise _missing_task(id)
    api_policy.authorize_on(context, action, rules.TASKS_SHOW,
                            task.project_id, _missing_task(id))
    return task


def _task_view(task: task_db.TaskRecord, who: visibility.Viewer) -> dict:
    """A task as ``who`` sees it: hosts as surrogates (one per host in
    the response) for a caller who does not see real ones."""
    found = task.to_dict()
    if who.real:
        return found
    hosts = visibility.Surrogates()

    def move(m):
        return dict(m, **{k: hosts[m[k]] for k in ('from', 'to') if m.get(k)})
    for key in ('moves', 'done', 'current'):
        found[key] = [move(m) for m in found[key]]
    if found['failed']:
        failed = found['failed'] = dict(found['failed'])
        if failed.get('move'):
            failed['move'] = move(failed['move'])
        if failed.get('host'):
            failed['host'] = hosts[failed['host']]
    return found


def _missing_task(id: str) -> webob.exc.HTTPNotFound:
    return webob.exc.HTTPNotFound(explanation=f'repair task {id} not found')


def list_tasks(req: webob.Request) -> webob.Response:
    """``GET /repairs/tasks``: every task kept the caller may see (its
    project's; every project's for administrators), the newest first."""
    context, tasks = _task_begin(req, rules.TASKS_LIST)
    who = visibility.viewer(req)
    return util.json_response(req, {'tasks': [
        _task_view(t, who) for t in tasks.list() if context.can(
            rules.TASKS_SHOW, {'project_id': t.project_id}, fatal=False)]})


def show_task(req: webob.Request) -> webob.Response:
    """``GET /repairs/tasks/{id}``: its progress."""
    context, tasks = _task_begin(req, rules.TASKS_SHOW)
    task = _task(req, context, tasks, rules.TASKS_SHOW)
    return util.json_response(req, {'task': _task_view(
        task, visibility.viewer(req))})


def cancel_task(req: webob.Request) -> webob.Response:
    """``DELETE /repairs/tasks/{id}``: the task stops after the moves
    running now (202); an ended task is a 409 naming its status."""
    context, tasks = _task_begin(req, rules.TASKS_CANCEL)
    id = _task(req, context, tasks, rules.TASKS_CANCEL).id
    task = tasks.request_cancel(id)
    if task.status != task_db.RUNNING:
        raise webob.exc.HTTPConflict(
            explanation=f'repair task {id} is {task.status} already')
    return util.json_response(req, {'task': _task_view(
        task, visibility.viewer(req))}, status=202)


def _moves(data: dict) -> typing.List[planner.Move]:
    """The moves an apply names, each server once.

    :raises webob.exc.HTTPBadRequest: a server moves twice.
    """
    moves = [planner.Move(m['server'], m['from'], m['to'],
                          bool(m.get('temporary')))
             for m in data['moves']]
    seen: typing.Set[str] = set()
    for i, move in enumerate(moves):
        if move.server in seen:
            raise webob.exc.HTTPBadRequest(
                explanation=f'moves[{i}].server: {move.server} moves twice '
                'in one plan')
        seen.add(move.server)
    return moves


def _read_for(service, asked: repairs.Asked, project: str,
              moves: typing.Sequence[planner.Move],
              fingerprint: str) -> repairs.Read:
    """The world the plan of ``moves`` was made on, read again (wide when
    it moves a server of no target); refused when it changed.

    :raises webob.exc.HTTPConflict: the world changed since the plan.
    """
    read = repairs.read(service, asked, project, True)
    mine = {s for t in read.problem.targets for s in t.servers}
    if any(m.server not in mine for m in moves):
        read = repairs.read(service, asked, project, True, wide=True)
    if repairs.fingerprint(read.problem, moves) != fingerprint:
        raise _changed('the policies, servers or hosts of the targets '
                       'changed since the plan was made')
    return read


def _changed(why: str) -> webob.exc.HTTPConflict:
    exc = webob.exc.HTTPConflict(
        explanation=f'the plan no longer fits the cloud ({why}); nothing '
        'was moved: plan again')
    exc.error_code = 'scoped_policies.repair_outdated'
    return exc
