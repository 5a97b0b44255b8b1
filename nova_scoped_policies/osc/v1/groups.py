"""``openstack server group scoped policy set|show|audit|add instance|remove
instance``."""

import json

from osc_lib.command import command
from osc_lib import exceptions

_COLUMNS = ('id', 'name', 'project_id', 'policies', 'rules', 'members')


def _client(cmd):
    return cmd.app.client_manager.scoped_policies


def _show(group: dict):
    return _COLUMNS, [group[c] for c in _COLUMNS]


def _group_arg(parser):
    parser.add_argument('group', help='the Nova server group uuid')


class SetScopedPolicy(command.ShowOne):
    """Give a server group scoped policies, or change them.

    Members are not moved: a change may create violations (see ``audit``).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _group_arg(parser)
        parser.add_argument('--policy', metavar='TYPE[:SCOPE[:ID]]',
                            action='append', default=[],
                            help='a policy, e.g. anti-affinity:rack '
                            '(repeat)')
        parser.add_argument('--rule', metavar='<key=value>',
                            action='append', default=[],
                            help='a rule, e.g. max_server_per_rack=2 '
                            '(repeat)')
        parser.add_argument('--name', help='the group name')
        parser.add_argument('--project', help='owner project (admin, on '
                            'creation)')
        return parser

    def take_action(self, args):
        body = {}
        if args.name:
            body['name'] = args.name
        if args.policy or args.rule:
            body['policies'] = args.policy
            body['rules'] = {}
            for rule in args.rule:
                key, sep, value = rule.partition('=')
                if not sep:
                    raise exceptions.CommandError(
                        f'--rule {rule!r}: expected key=value')
                try:
                    body['rules'][key] = json.loads(value)
                except ValueError:
                    body['rules'][key] = value
        if not body:
            raise exceptions.CommandError(
                'give --policy, --rule or --name')
        client = _client(self)
        try:
            client.request('GET', f'/os-server-groups/{args.group}')
        except exceptions.CommandError as exc:
            if ': 404 ' not in str(exc):
                raise
            body['id'] = args.group
            if args.project:
                body['project_id'] = args.project
            return _show(client.request('POST', '/os-server-groups', {
                'server_group': body})['server_group'])
        return _show(client.request('POST', f'/os-server-groups/{args.group}',
                                    {'server_group': body})['server_group'])


class ShowScopedPolicy(command.ShowOne):
    """Show a server group's scoped policies and members."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _group_arg(parser)
        return parser

    def take_action(self, args):
        return _show(_client(self).request(
            'GET', f'/os-server-groups/{args.group}')['server_group'])


class AuditScopedPolicy(command.Lister):
    """Where each member runs, per scope of the group's policies; the
    violations are printed after the table."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _group_arg(parser)
        return parser

    def take_action(self, args):
        audit = _client(self).request(
            'GET', f'/os-server-groups/{args.group}/audit')[
            'server_group_policy_audit']
        scopes = sorted({s for m in audit['members']
                         for s in m['placements']})
        for violation in audit['violations']:
            self.app.stderr.write(f'violation: {violation}\n')
        return (('instance_id',) + tuple(scopes),
                [[m['instance_id']] + [m['placements'].get(s)
                                       for s in scopes]
                 for m in audit['members']])


class _InstanceAction(command.ShowOne):
    action = ''

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _group_arg(parser)
        parser.add_argument('instance', help='the instance uuid')
        return parser

    def take_action(self, args):
        return _show(_client(self).request(
            'POST', f'/os-server-groups/{args.group}/action',
            {self.action: {'instance_id': args.instance}})['server_group'])


class AddInstance(_InstanceAction):
    """Add an instance to a group without enforcing its policies."""

    action = 'add_instance'


class RemoveInstance(_InstanceAction):
    """Remove an instance from a group."""

    action = 'remove_instance'
