"""``openstack scoped policy repair plan|apply``: the fewest moves that end
every hard violation of a server group, a stack or (admins) all of them.

``plan`` shows the plan (moves in order). ``apply`` plans, then starts a
repair task that carries the plan out (waves of at most
``--max-parallel`` moves, each checked by nova-scheduler) and follows it
with a progress bar; the task stops at the first move that fails, and the
command says what was done. Nothing is moved without a plan, and a plan
whose cloud changed is refused before any move. ``repair task
list|show|cancel`` reads and cancels tasks.
"""

import argparse
import time

from osc_lib import exceptions
import rich.console
import rich.progress

from nova_scoped_policies.api.policies import repairs as rules
from nova_scoped_policies.osc.v1 import common
from nova_scoped_policies.osc.v1 import groups
from nova_scoped_policies.osc.v1 import stacks

MOVE_COLUMNS = ('server', 'name', 'from', 'to', 'temporary')
REPAIRED = 'repaired'
NOTHING = 'nothing to do'
"""Statuses of a plan (those of :mod:`nova_scoped_policies.repair.planner`,
which the CLI does not import: it needs the service's dependencies)."""


def _target_args(parser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument('--server-group', metavar='<server-group>',
                       help='only this server group (name or uuid)')
    group.add_argument('--stack', metavar='<stack>',
                       help='only this stack (decision id or name)')


def _target(cmd, args) -> dict:
    if args.server_group:
        return {'server_group': groups.group_id(cmd, args.server_group)}
    if args.stack:
        return {'stack': stacks.stack_id(cmd, args.stack)}
    return {}


def _rows(moves):
    return [tuple(m.get(c, '') if c != 'temporary' else
                  bool(m.get('temporary')) for c in MOVE_COLUMNS)
            for m in moves]


def _plan(cmd, args) -> dict:
    return common.client(cmd).request(
        'POST', '/repairs', {'repair': _target(cmd, args)})['repair']


def summary(plan: dict) -> str:
    """What a plan says, in words: its moves, the violations before the
    repair and after it (none once repaired; unchanged without a plan)."""
    moves, before = len(plan['moves']), len(plan['violations'])
    if plan['status'] == REPAIRED:
        after = 'after it: 0'
    elif plan['status'] == NOTHING:
        after = 'nothing to repair'
    else:
        after = f'after it: {before} (no plan)'
    return (f'{plan["status"]}: {moves} move(s); violations before the '
            f'repair: {before}, {after}'
            + (f'; {plan["reason"]}' if plan['reason'] else ''))


class PlanRepair(common.Lister):
    """Plan the fewest live migrations that end every hard violation.

    With neither --server-group nor --stack, the plan covers every server
    group and stack of the cloud (administrators only). Nothing is moved:
    see repair apply. In a table, a summary and the violations found come
    before the moves; with -f json, yaml, csv or value, the output is the
    moves alone and the summary goes to standard error.
    """

    rule = rules.PLAN

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _target_args(parser)
        return parser

    def take_action(self, args):
        plan = _plan(self, args)
        # machine-readable output is the format asked, nothing else
        out = self.app.stdout if args.formatter == 'table' else \
            self.app.stderr
        out.write(summary(plan) + '\n')
        for line in plan['violations']:
            out.write(f'  {line}\n')
        return MOVE_COLUMNS, _rows(plan['moves'])


class ApplyRepair(common.Lister):
    """Plan a repair and carry it out through Nova (live migrations), as
    a repair task the command follows with a progress bar.

    With neither --server-group nor --stack, every server group and stack
    of the cloud (administrators only).
    """

    rule = rules.APPLY

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _target_args(parser)
        parser.add_argument('--max-parallel', metavar='<n>', type=int,
                            default=1, help='most moves at once (moves '
                            'on different hosts and targets only)')
        parser.add_argument('--poll', metavar='<seconds>', type=float,
                            default=2.0, help=argparse.SUPPRESS)
        return parser

    def take_action(self, args):
        if args.max_parallel < 1:
            raise exceptions.CommandError('--max-parallel: at least 1')
        client = common.client(self)
        target = _target(self, args)
        plan = _plan(self, args)
        if plan['status'] != 'repaired':
            raise exceptions.CommandError(
                f'{plan["status"]}: {plan["reason"] or "no move to make"}')
        task = client.request('POST', '/repairs/apply', {
            'repair': dict(target, fingerprint=plan['fingerprint'],
                           moves=plan['moves'],
                           max_parallel=args.max_parallel)})['task']
        self.app.stderr.write(f'repair task {task["id"]}\n')
        task = follow(self.app, client, task, args.poll)
        return MOVE_COLUMNS, _rows(task['done'])


def follow(app, client, task: dict, poll: float) -> dict:
    """Follow a task with a progress bar until it ends; say how it ended
    when it did not apply every move."""
    columns = (rich.progress.TextColumn('{task.description}'),
               rich.progress.BarColumn(),
               rich.progress.MofNCompleteColumn())
    with rich.progress.Progress(
            *columns, console=rich.console.Console(file=app.stderr),
            disable=not app.stderr.isatty()) as progress:
        bar = progress.add_task('live migrations',
                                total=len(task['moves']))
        while True:
            progress.update(bar, completed=len(task['done']))
            if task['status'] != 'running':
                break
            time.sleep(poll)
            task = client.request('GET', f'/repairs/tasks/{task["id"]}')[
                'task']
    if task['status'] == 'stopped':
        failed = task['failed'] or {}
        move = failed.get('move') or {}
        app.stdout.write(
            f'stopped after {len(task["done"])} move(s): '
            f'{move.get("server")} to {move.get("to")}: '
            f'{failed.get("reason")}\n')
    elif task['status'] != 'applied':
        app.stdout.write(
            f'{task["status"]} after {len(task["done"])} move(s): plan '
            'again to finish the work\n')
    return task


TASK_COLUMNS = ('id', 'target', 'status', 'moves', 'done', 'current',
                'failed', 'cancel_requested', 'created_at', 'finished_at')


def _task_row(task: dict) -> tuple:
    return (task['id'], task['target'], task['status'], len(task['moves']),
            len(task['done']), ', '.join(m['server'] for m in
                                         task['current']),
            (task['failed'] or {}).get('reason', ''),
            task['cancel_requested'], task['created_at'],
            task['finished_at'] or '')


class ListRepairTasks(common.Lister):
    """List the repair tasks kept (administrators)."""

    rule = rules.TASKS_LIST

    def take_action(self, args):
        tasks = common.client(self).request('GET', '/repairs/tasks')[
            'tasks']
        return TASK_COLUMNS, [_task_row(t) for t in tasks]


class ShowRepairTask(common.ShowOne):
    """Show a repair task's progress (administrators)."""

    rule = rules.TASKS_SHOW

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('task', metavar='<task>', help='its id')
        return parser

    def take_action(self, args):
        task = common.client(self).request(
            'GET', f'/repairs/tasks/{args.task}')['task']
        return TASK_COLUMNS, _task_row(task)


class CancelRepairTask(common.Command):
    """Cancel a repair task: it stops after the moves running now."""

    rule = rules.TASKS_CANCEL

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('task', metavar='<task>', help='its id')
        return parser

    def take_action(self, args):
        common.client(self).request('DELETE', f'/repairs/tasks/{args.task}')
