"""``openstack policy scope create|list|show|set|delete|add aggregate|remove
aggregate``."""

from osc_lib.command import command

_COLUMNS = ('uuid', 'name', 'allow_identifiers', 'obfuscate_identifiers',
            'obfuscate_namespace_uuid', 'aggregates')


def _client(cmd):
    return cmd.app.client_manager.scoped_policies


def _show(scope: dict):
    columns = [c for c in _COLUMNS if c in scope]
    return columns, [scope[c] for c in columns]


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


def _body(args, name=None) -> dict:
    body = {}
    if name:
        body['name'] = name
    for key in ('allow_identifiers', 'obfuscate_identifiers'):
        if getattr(args, key) is not None:
            body[key] = getattr(args, key)
    if args.namespace:
        body['obfuscate_namespace_uuid'] = args.namespace
    return body


class CreateScope(command.ShowOne):
    """Create a policy scope (admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', help='the scope name used in policies')
        _flags(parser)
        parser.add_argument('--aggregate', metavar='<uuid>', action='append',
                            default=[], help='a host aggregate that is a '
                            'domain of the scope (repeat)')
        return parser

    def take_action(self, args):
        body = _body(args, args.name)
        if args.aggregate:
            body['aggregates'] = args.aggregate
        return _show(_client(self).request(
            'POST', '/os-policy-scopes', {'policy_scope': body})[
            'policy_scope'])


class ListScope(command.Lister):
    """List policy scopes."""

    def take_action(self, args):
        scopes = _client(self).request('GET', '/os-policy-scopes')[
            'policy_scopes']
        columns = ('uuid', 'name', 'allow_identifiers',
                   'obfuscate_identifiers')
        return columns, [[s[c] for c in columns] for s in scopes]


class ShowScope(command.ShowOne):
    """Show a policy scope."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scope', help='scope name or uuid')
        return parser

    def take_action(self, args):
        return _show(_client(self).request(
            'GET', f'/os-policy-scopes/{args.scope}')['policy_scope'])


class SetScope(command.Command):
    """Rename a scope or change its identifier settings (admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scope', help='scope name or uuid')
        parser.add_argument('--name', help='the new name')
        _flags(parser)
        return parser

    def take_action(self, args):
        _client(self).request('PUT', f'/os-policy-scopes/{args.scope}',
                              {'policy_scope': _body(args, args.name)})


class DeleteScope(command.Command):
    """Delete a policy scope no group uses (admin)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scope', help='scope name or uuid')
        return parser

    def take_action(self, args):
        _client(self).request('DELETE', f'/os-policy-scopes/{args.scope}')


class _AggregateAction(command.ShowOne):
    action = ''

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('scope', help='scope name or uuid')
        parser.add_argument('aggregate', help='host aggregate uuid')
        return parser

    def take_action(self, args):
        return _show(_client(self).request(
            'POST', f'/os-policy-scopes/{args.scope}/action',
            {self.action: {'aggregate': args.aggregate}})['policy_scope'])


class AddAggregate(_AggregateAction):
    """Make a host aggregate a domain of a scope (admin)."""

    action = 'add_aggregate'


class RemoveAggregate(_AggregateAction):
    """Remove a domain from a scope (admin)."""

    action = 'remove_aggregate'
