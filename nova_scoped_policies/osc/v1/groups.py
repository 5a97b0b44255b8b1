"""``openstack scoped policy group set|show|list|delete|audit|add
instance|remove instance``.

Groups are Nova server groups, named by uuid or by name: a name is looked up
among the caller's scoped groups first, then among Nova's server groups.
Instances are named by uuid or, through Nova, by name.
"""

import json

from cliff import columns as cliff_columns
from osc_lib import exceptions
from oslo_utils import uuidutils

from nova_scoped_policies.api.policies import groups as group_rules
from nova_scoped_policies.osc.v1 import common

COLUMNS = ('id', 'name', 'project_id', 'user_id', 'policies', 'rules',
           'members', 'excluded_members', 'created_at', 'updated_at')
LIST_COLUMNS = ('id', 'name', 'project_id', 'policies', 'rules', 'members')
AUDIT_COLUMNS = ('server_group_id', 'members', 'violations')


def group_id(cmd, value: str) -> str:
    """The uuid of the group named ``value`` (a uuid or a unique name)."""
    if uuidutils.is_uuid_like(value):
        return value
    mine = [g['id'] for g in common.client(cmd).request(
        'GET', '/os-server-groups')['server_groups'] if g['name'] == value]
    if len(mine) > 1:
        raise exceptions.CommandError(
            f'{len(mine)} server groups are named {value!r}: give the uuid')
    if mine:
        return mine[0]
    return common.nova_id(cmd, value, 'server_group',
                          ' among your project\'s scoped groups')


def _group_arg(parser) -> None:
    parser.add_argument('group', metavar='<group>',
                        help='server group name or uuid')


def _flat(group: dict) -> dict:
    """A group as the commands show it: its ``policies`` and its
    ``rules``, from the API's ``policy`` object or list of them
    (microversion 1.3), so that scripts read the same columns."""
    group = dict(group)
    found = group.pop('policy', None)
    items = [found] if isinstance(found, dict) else list(found or ())
    group['policies'] = [item['name'] for item in items]
    group['rules'] = {k: v for item in items
                      for k, v in (item.get('rules') or {}).items()}
    return group


def _objects(policies, rules) -> dict:
    """``--policy`` and ``--rule`` as the API's policy objects: the
    rules go with the first (they apply to the group together)."""
    found = [{'name': name} for name in policies]
    if rules:
        found[0]['rules'] = rules
    return found[0] if len(found) == 1 else found


def _rules(values) -> dict:
    rules = {}
    for rule in values:
        key, sep, value = rule.partition('=')
        if not sep:
            raise exceptions.CommandError(
                f'--rule {rule!r}: expected key=value')
        try:
            rules[key] = json.loads(value)
        except ValueError:
            rules[key] = value
    return rules


class SetGroupPolicy(common.ShowOne):
    """Give a server group scoped policies, or change them.

    Members are not moved: a change may create violations (see ``audit``).
    """

    rule = group_rules.CREATE

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
        parser.add_argument('--name', metavar='<name>',
                            help='the group name')
        parser.add_argument('--project', metavar='<project-id>',
                            help='(admin) owner project, on creation')
        return parser

    def take_action(self, args):
        body = {}
        if args.name:
            body['name'] = args.name
        rules = _rules(args.rule)
        if rules and not args.policy:
            raise exceptions.CommandError(
                '--rule needs the group\'s --policy (a change gives them '
                'all)')
        if args.policy:
            body['policy'] = _objects(args.policy, rules)
        if not body:
            raise exceptions.CommandError(
                'give --policy, --rule or --name')
        client = common.client(self)
        group = group_id(self, args.group)
        try:
            client.request('GET', f'/os-server-groups/{group}')
        except exceptions.CommandError as exc:
            if ': 404 ' not in str(exc):
                raise
            body['id'] = group
            if args.project:
                body['project_id'] = args.project
            created = client.request('POST', '/os-server-groups', {
                'server_group': body})['server_group']
            return common.show(_flat(created), COLUMNS)
        return common.show(_flat(client.request(
            'POST', f'/os-server-groups/{group}',
            {'server_group': body})['server_group']), COLUMNS)


class ShowGroupPolicy(common.ShowOne):
    """Show a server group's scoped policies and members."""

    rule = group_rules.SHOW

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _group_arg(parser)
        common.as_tenant_option(parser)
        return parser

    def take_action(self, args):
        group = group_id(self, args.group)
        url = f'/os-server-groups/{group}' + common.as_tenant_query(args)
        return common.show(_flat(common.client(self).request('GET', url)[
            'server_group']), COLUMNS)


class ListGroupPolicy(common.Lister):
    """List the server groups with scoped policies."""

    rule = group_rules.LIST

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--all-projects', action='store_true',
                            help='(admin) every project\'s groups')
        parser.add_argument('--project', metavar='<project-id>',
                            help='(admin) this project\'s groups')
        common.as_tenant_option(parser)
        return parser

    def take_action(self, args):
        query = []
        if args.all_projects:
            query.append('all_projects=true')
        if args.project:
            query.append(f'project_id={args.project}')
        if args.as_tenant:
            query.append(f'as_tenant_id={args.as_tenant}')
        url = '/os-server-groups' + ('?' + '&'.join(query) if query else '')
        groups = common.client(self).request('GET', url)['server_groups']
        return common.rows([_flat(g) for g in groups], LIST_COLUMNS)


class DeleteGroupPolicy(common.Command):
    """Delete the scoped policies of server groups (the Nova groups and
    their servers stay)."""

    rule = group_rules.DELETE

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('group', metavar='<group>', nargs='+',
                            help='server group name or uuid (repeat)')
        return parser

    def take_action(self, args):
        for value in args.group:
            common.client(self).request(
                'DELETE', f'/os-server-groups/{group_id(self, value)}')


class _Placements(cliff_columns.FormattableColumn):
    """member -> {scope: domain}: one line per member in tables."""

    def human_readable(self):
        return '\n'.join(
            f"{m['instance_id']}: " + ', '.join(
                f'{scope}={where}' for scope, where in sorted(
                    m['placements'].items()))
            for m in self._value)

    def machine_readable(self):
        return self._value


class _Lines(cliff_columns.FormattableColumn):
    """A list shown one item per line in tables."""

    def human_readable(self):
        return '\n'.join(self._value)

    def machine_readable(self):
        return list(self._value)


class AuditGroupPolicy(common.Audit):
    """Where each member runs, per scope of the group's policies, and the
    policies they violate.

    With ``--exit-code``, exits 1 when there are violations (as ``git diff
    --exit-code`` does), for scripts and monitoring.
    """

    rule = group_rules.AUDIT

    what = 'the group'

    def add_target(self, parser) -> None:
        _group_arg(parser)

    def take_action(self, args):
        group = group_id(self, args.group)
        url = (f'/os-server-groups/{group}/audit'
               + common.as_tenant_query(args))
        audit = common.client(self).request('GET', url)[
            'server_group_policy_audit']
        self.violated = bool(audit['violations'])
        return AUDIT_COLUMNS, (audit['server_group_id'],
                               _Placements(audit['members']),
                               _Lines(audit['violations']))


class _InstanceAction(common.ShowOne):
    action = ''

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _group_arg(parser)
        parser.add_argument('instance', metavar='<server>',
                            help='server name or uuid')
        return parser

    def take_action(self, args):
        group = group_id(self, args.group)
        instance = common.nova_id(self, args.instance, 'server')
        return common.show(_flat(common.client(self).request(
            'POST', f'/os-server-groups/{group}/action',
            {self.action: {'instance_id': instance}})['server_group']),
            COLUMNS)


class AddInstance(_InstanceAction):
    """Add a server to a group without enforcing its policies.

    A server Nova booted into the group and removed from it here counts
    again.
    """

    rule = group_rules.ADD_INSTANCE

    action = 'add_instance'


class RemoveInstance(_InstanceAction):
    """Remove a server from a group.

    A server Nova booted into the group stays in Nova's group (``openstack
    server group show`` lists it) but no longer counts for the group's
    scoped policies: it is shown under ``excluded_members``.
    """

    rule = group_rules.REMOVE_INSTANCE

    action = 'remove_instance'
