"""``openstack scoped policy stack create|list|show|renew|confirm|delete|
boot member|audit``: joint decisions for stacks (policy API 1.1; the audit
and the phases ``expired`` and ``live`` 1.2).

A stack document (doc/source/user/stacks.rst) is read from a JSON
or YAML file; ``{"stack": {...}}`` or the inner mapping alone.
"""

import json

from cliff import columns as cliff_columns
from osc_lib import exceptions
from oslo_utils import uuidutils
import yaml

from nova_scoped_policies.api.policies import stacks as rules
from nova_scoped_policies.osc.v1 import common

COLUMNS = ('id', 'name', 'project_id', 'status', 'lease_seconds',
           'expires_at', 'seconds', 'servers', 'hints')
LIST_COLUMNS = ('id', 'name', 'project_id', 'status', 'expires_at')
AUDIT_COLUMNS = ('stack_id', 'status', 'servers', 'policies')


def _stack_arg(parser) -> None:
    parser.add_argument('stack', metavar='<stack>',
                        help='stack decision id, or a unique stack name')


def stack_id(cmd, value: str) -> str:
    """The id of the stack ``value`` names: an id, or the name of one
    stack of the caller's project. An administrator's other projects are
    not searched (a name is unique in its project only): their stacks are
    named by id, as ``stack list --all-projects`` shows them."""
    if uuidutils.is_uuid_like(value):
        return value
    stacks = common.client(cmd).request('GET', '/stacks')['stacks']
    named = [s['id'] for s in stacks if s['name'] == value]
    if len(named) > 1:
        raise exceptions.CommandError(
            f'{len(named)} stack decisions are named {value!r}: give the id')
    if not named:
        raise exceptions.CommandError(
            f'no stack named {value!r} in your project; give the id (stack '
            'list --all-projects shows every project\'s)')
    return named[0]


def _servers(record: dict) -> dict:
    """The servers column: name -> host (state)."""
    record = dict(record)
    record['servers'] = {name: f'{s["host"]} ({s["state"]})'
                         for name, s in record['servers'].items()}
    record['hints'] = {name: f'scoped_plan={h["scoped_plan"]}, '
                       f'scoped_plan_member={h["scoped_plan_member"]}'
                       for name, h in record['hints'].items()}
    return record


def _load(path: str) -> dict:
    try:
        with open(path, encoding='utf-8') as handle:
            text = handle.read()
    except OSError as exc:
        raise exceptions.CommandError(f'--file {path}: {exc}')
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise exceptions.CommandError(
                f'--file {path}: neither JSON nor YAML: {exc}')
    if isinstance(data, dict) and 'stack' not in data:
        data = {'stack': data}
    return data


class CreateStack(common.ShowOne):
    """Decide a stack jointly and hold its capacity in Placement."""

    rule = rules.CREATE

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--file', metavar='<path>', required=True,
                            help='the stack document, JSON or YAML')
        return parser

    def take_action(self, args):
        body = common.client(self).request('POST', '/stacks',
                                           _load(args.file))
        return common.show(_servers(body['stack']), COLUMNS)


class ListStack(common.Lister):
    """List stack decisions."""

    rule = rules.LIST

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--all-projects', action='store_true',
                            help='(admin) every project\'s')
        return parser

    def take_action(self, args):
        url = '/stacks' + ('?all_projects=true' if args.all_projects else '')
        stacks = common.client(self).request('GET', url)['stacks']
        return common.rows(stacks, LIST_COLUMNS)


class ShowStack(common.ShowOne):
    """Show a stack decision: servers, their hosts and boot hints."""

    rule = rules.SHOW

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        return parser

    def take_action(self, args):
        body = common.client(self).request(
            'GET', f'/stacks/{stack_id(self, args.stack)}')
        return common.show(_servers(body['stack']), COLUMNS)


class _StackAction(common.ShowOne):
    """``POST /stacks/{id}/action`` with the body :meth:`body` makes."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        self.add_arguments(parser)
        return parser

    def add_arguments(self, parser) -> None:
        """The action's own arguments."""

    def body(self, args) -> dict:
        raise NotImplementedError

    def take_action(self, args):
        body = common.client(self).request(
            'POST', f'/stacks/{stack_id(self, args.stack)}/action',
            self.body(args))
        return common.show(_servers(body['stack']), COLUMNS)


class RenewStack(_StackAction):
    """Extend a decision's lease."""

    rule = rules.RENEW

    def add_arguments(self, parser) -> None:
        parser.add_argument('--lease-seconds', type=int, metavar='<n>',
                            help='new lease from now (default: the '
                            'stack\'s lease_seconds)')

    def body(self, args) -> dict:
        return {'renew': ({'lease_seconds': args.lease_seconds}
                          if args.lease_seconds else None)}


class ConfirmStack(_StackAction):
    """The stack is built: release the holds of servers never booted."""

    rule = rules.CONFIRM

    def body(self, args) -> dict:
        return {'confirm': None}


class BootMember(_StackAction):
    """(admin, what the scheduler does) give a member's hold back as it
    boots on its decided host."""

    rule = rules.BOOT_MEMBER

    def add_arguments(self, parser) -> None:
        parser.add_argument('member', metavar='<server-name>',
                            help='the server\'s name in the stack')

    def body(self, args) -> dict:
        return {'boot_member': {'name': args.member}}


class DeleteStack(common.Command):
    """Release every hold of a decision and forget it."""

    rule = rules.DELETE

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        return parser

    def take_action(self, args):
        common.client(self).request(
            'DELETE', f'/stacks/{stack_id(self, args.stack)}')


class _Policies(cliff_columns.FormattableColumn):
    """One line per document of the stack, its violations below it."""

    def human_readable(self):
        lines = []
        for p in self._value:
            lines.append(f"{p['field']} ({p['kind']}) "
                         f"{', '.join(p['policies'])}: {p['status']}")
            lines.extend(f'  {v}' for v in p['violations'])
        return '\n'.join(lines)

    def machine_readable(self):
        return self._value


class AuditStack(common.Audit):
    """Each policy and relationship of a stack against where its servers
    are now, with its violations (hosts as surrogates for tenants).

    With ``--exit-code``, exits 1 when there are violations, for scripts
    and monitoring.
    """

    rule = rules.AUDIT

    what = 'the stack'

    def add_target(self, parser) -> None:
        _stack_arg(parser)

    def take_action(self, args):
        url = (f'/stacks/{stack_id(self, args.stack)}/audit'
               + common.as_tenant_query(args))
        audit = common.client(self).request('GET', url)['stack_audit']
        self.violated = audit['status'] == 'violated'
        servers = {name: host or '-' for name, host in
                   audit['servers'].items()}
        return AUDIT_COLUMNS, (audit['stack_id'], audit['status'],
                               common.formatted({'s': servers}, ('s',))[0],
                               _Policies(audit['policies']))
