"""``openstack scoped policy repair plan|apply``: the fewest moves that end
every hard violation of a server group, a stack or (admins) all of them.

``plan`` shows the plan (moves in order, temporary ones marked). ``apply``
plans, then carries the plan out part by part (a wave of at most
``--max-parallel`` moves per request, each checked by nova-scheduler),
showing its progress; it stops at the first move that fails and says what
was done. Nothing is moved without a plan, and a plan whose cloud changed
is refused before any move.
"""

from osc_lib.command import command
from osc_lib import exceptions
import rich.console
import rich.progress

from nova_scoped_policies.osc.v1 import common

MOVE_COLUMNS = ('server', 'name', 'from', 'to', 'temporary')


def _target_args(parser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument('--server-group', metavar='<server-group>',
                       help='a server group (name or uuid)')
    group.add_argument('--stack', metavar='<stack>',
                       help='a stack decision id')


def _target(cmd, args) -> dict:
    if args.server_group:
        return {'server_group': common.nova_id(cmd, args.server_group,
                                               'server_group')}
    if args.stack:
        return {'stack': args.stack}
    return {}


def _rows(moves):
    return [tuple(m.get(c, '') if c != 'temporary' else
                  bool(m.get('temporary')) for c in MOVE_COLUMNS)
            for m in moves]


def _plan(cmd, args) -> dict:
    return common.client(cmd).request(
        'POST', '/repairs', {'repair': _target(cmd, args)})['repair']


class PlanRepair(command.Lister):
    """Plan the fewest live migrations that end every hard violation."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _target_args(parser)
        return parser

    def take_action(self, args):
        plan = _plan(self, args)
        self.app.stdout.write(
            f'{plan["status"]}: {len(plan["moves"])} move(s), '
            f'{len(plan["violations"])} violation(s) now'
            + (f'; {plan["reason"]}' if plan['reason'] else '') + '\n')
        for line in plan['violations']:
            self.app.stdout.write(f'  {line}\n')
        return MOVE_COLUMNS, _rows(plan['moves'])


class ApplyRepair(command.Lister):
    """Plan a repair and carry it out through Nova (live migrations)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _target_args(parser)
        parser.add_argument('--max-parallel', metavar='<n>', type=int,
                            default=1, help='most moves at once (moves '
                            'on different hosts and targets only)')
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
        moves, fingerprint, done = plan['moves'], plan['fingerprint'], []
        columns = (rich.progress.TextColumn('{task.description}'),
                   rich.progress.BarColumn(),
                   rich.progress.MofNCompleteColumn())
        with rich.progress.Progress(
                *columns, console=rich.console.Console(
                    file=self.app.stderr),
                disable=not self.app.stderr.isatty()) as progress:
            task = progress.add_task('live migrations', total=len(moves))
            while moves:
                part = moves[:args.max_parallel]
                answer = client.request('POST', '/repairs/apply', {
                    'repair': dict(target, fingerprint=fingerprint,
                                   moves=part,
                                   max_parallel=args.max_parallel)}
                )['repair']
                done += answer['done']
                progress.advance(task, len(answer['done']))
                if answer['failed']:
                    failed = answer['failed']
                    rows = _rows(done)
                    self.app.stdout.write(
                        f'stopped after {len(done)} move(s): '
                        f'{failed["move"]["server"]} to '
                        f'{failed["move"]["to"]}: {failed["reason"]}\n')
                    return MOVE_COLUMNS, rows
                moves = moves[len(part):]
                fingerprint = answer['fingerprint']
        return MOVE_COLUMNS, _rows(done)
