"""``openstack scoped policy scope create|list|show|set|delete|add
aggregate|remove aggregate``.

Scopes are named by name or uuid (the API takes both); aggregates by uuid
or, through Nova, by name.
"""


from nova_scoped_policies.api.policies import scopes as rules
from nova_scoped_policies.osc.v1 import common

COLUMNS = ('uuid', 'name', 'allow_identifiers', 'obfuscate_identifiers',
           'obfuscate_namespace_uuid', 'parent', 'aggregates', 'created_at',
           'updated_at')
LIST_COLUMNS = ('uuid', 'name', 'allow_identifiers', 'obfuscate_identifiers',
                'aggregates')


def _flag(parser, name: str, what: str) -> None:
    dest = name.replace('-', '_')
    group = parser.add_mutually_exclusive_group()
    group.add_argument(f'--{name}', dest=dest, action='store_true',
                       default=None, help=what)
    group.add_argument(f'--no-{name}', dest=dest, action='store_false',
                       help=f'the opposite of --{name}')


def _flags(parser) -> None:
    _flag(parser, 'allow-identifiers',
          'tenants may target the domains by identifier')
    _flag(parser, 'obfuscate-identifiers',
          'tenants see per-project identifiers')
    parser.add_argument('--namespace', metavar='<uuid>',
                        help='the uuid5 namespace of the obfuscation '
                        '(random when a scope is created without it)')
    parser.add_argument('--parent', metavar='<scope>',
                        help='a coarser scope each domain of this one lies '
                        'in (e.g. row for rack), for stacks')


def _body(args, name=None) -> dict:
    body = {}
    if name:
        body['name'] = name
    for key in ('allow_identifiers', 'obfuscate_identifiers'):
        if getattr(args, key) is not None:
            body[key] = getattr(args, key)
    if args.namespace:
        body['obfuscate_namespace_uuid'] = args.namespace
    if getattr(args, 'parent', None):
        body['parent'] = args.parent
    return body


def _scope_arg(parser) -> None:
    parser.add_argument('scope', metavar='<scope>', help='scope name or uuid')


class CreateScope(common.ShowOne):
    """Create a policy scope (admin)."""

    rule = rules.CREATE

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='the scope name used in policies')
        _flags(parser)
        parser.add_argument('--aggregate', metavar='<aggregate>',
                            action='append', default=[],
                            help='a host aggregate (name or uuid) that is '
                            'a domain of the scope (repeat)')
        return parser

    def take_action(self, args):
        body = _body(args, args.name)
        if args.aggregate:
            body['aggregates'] = [common.nova_id(self, a, 'aggregate')
                                  for a in args.aggregate]
        return common.show(common.client(self).request(
            'POST', '/os-policy-scopes', {'policy_scope': body})[
            'policy_scope'], COLUMNS)


class ListScope(common.Lister):
    """List policy scopes."""

    rule = rules.LIST

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.as_tenant_option(parser)
        return parser

    def take_action(self, args):
        scopes = common.client(self).request(
            'GET', '/os-policy-scopes' + common.as_tenant_query(args))[
            'policy_scopes']
        return common.rows(scopes, LIST_COLUMNS)


class ShowScope(common.ShowOne):
    """Show a policy scope."""

    rule = rules.SHOW

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _scope_arg(parser)
        common.as_tenant_option(parser)
        return parser

    def take_action(self, args):
        url = f'/os-policy-scopes/{args.scope}' + common.as_tenant_query(
            args)
        return common.show(common.client(self).request('GET', url)[
            'policy_scope'], COLUMNS)


class SetScope(common.Command):
    """Rename a scope or change its identifier settings (admin)."""

    rule = rules.UPDATE

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _scope_arg(parser)
        parser.add_argument('--name', metavar='<name>', help='the new name')
        _flags(parser)
        return parser

    def take_action(self, args):
        common.client(self).request(
            'PUT', f'/os-policy-scopes/{args.scope}',
            {'policy_scope': _body(args, args.name)})


class DeleteScope(common.Command):
    """Delete policy scopes no group uses (admin)."""

    rule = rules.DELETE

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scope', metavar='<scope>', nargs='+',
                            help='scope name or uuid (repeat)')
        return parser

    def take_action(self, args):
        for scope in args.scope:
            common.client(self).request('DELETE',
                                        f'/os-policy-scopes/{scope}')


class _AggregateAction(common.ShowOne):
    action = ''

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _scope_arg(parser)
        parser.add_argument('aggregate', metavar='<aggregate>',
                            help='host aggregate name or uuid')
        return parser

    def take_action(self, args):
        aggregate = common.nova_id(self, args.aggregate, 'aggregate')
        return common.show(common.client(self).request(
            'POST', f'/os-policy-scopes/{args.scope}/action',
            {self.action: {'aggregate': aggregate}})['policy_scope'],
            COLUMNS)


class AddAggregate(_AggregateAction):
    """Make a host aggregate a domain of a scope (admin)."""

    rule = rules.ADD_AGGREGATE

    action = 'add_aggregate'


class RemoveAggregate(_AggregateAction):
    """Remove a domain from a scope (admin)."""

    rule = rules.REMOVE_AGGREGATE

    action = 'remove_aggregate'
