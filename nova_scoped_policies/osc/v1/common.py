"""What the commands share: the client, names for ids, output columns,
help without reStructuredText."""

import argparse
import re
import typing

from cliff import columns as cliff_columns
from osc_lib.cli import format_columns
from osc_lib.command import command
from osc_lib import exceptions
from oslo_utils import uuidutils

from nova_scoped_policies.osc import plugin


def client(cmd):
    """The policy API client of a command."""
    return cmd.app.client_manager.scoped_policies


def _no_nova(kind: str, value: str, where: str) -> exceptions.CommandError:
    """The error of a name Nova cannot be asked about (no Keystone, no
    compute endpoint, Nova unreachable): what was not found, where it was
    looked for, and what to do; never the library's text."""
    return exceptions.CommandError(
        f'no {kind} named {value!r}{where}, and Nova cannot look the name '
        'up: the compute service is not configured or not reachable (e.g. '
        'with --os-auth-type none); give the uuid')


def compute(cmd, kind: str, value: str, where: str = ''):
    """openstacksdk's compute proxy, to find Nova resources by name.

    :param kind: what is looked up (``server group``), for the error
        without a compute endpoint (``--os-auth-type none``).
    :param value: the name looked up.
    :param where: where it was looked for before, for the error.
    """
    from keystoneauth1 import exceptions as ksa_exc
    from openstack import exceptions as sdk_exc
    from osc_lib import exceptions as osc_exc
    try:
        return cmd.app.client_manager.compute
    # no catalog, no endpoint, no auth
    except (ksa_exc.ClientException, sdk_exc.SDKException,
            osc_exc.ClientException, osc_exc.PluginAttributeError) as exc:
        raise _no_nova(kind, value, where) from exc


def nova_id(cmd, value: str, kind: str, where: str = '') -> str:
    """``value`` as a uuid: itself, or the one Nova resource so named.

    :param value: a uuid or a name.
    :param kind: ``aggregate``, ``server`` or ``server_group``.
    :param where: where the name was looked for before Nova (``" among
        your scoped groups"``), for the errors.
    """
    if uuidutils.is_uuid_like(value):
        return value
    from keystoneauth1 import exceptions as ksa_exc
    from openstack import exceptions as sdk_exc

    what = kind.replace('_', ' ')
    finder = getattr(compute(cmd, what, value, where), f'find_{kind}')
    try:
        found = finder(value, ignore_missing=False)
    except sdk_exc.NotFoundException:
        raise exceptions.CommandError(
            f'no {what} named {value!r}{where} or in Nova')
    except sdk_exc.DuplicateResource:
        raise exceptions.CommandError(
            f'more than one {what} is named {value!r}: give the uuid')
    except (ksa_exc.ClientException, sdk_exc.SDKException):
        raise _no_nova(what, value, where)
    if kind == 'aggregate':
        return found.uuid
    return found.id


def as_tenant_option(parser) -> None:
    """``--as-tenant``: an administrator sees what a project sees."""
    parser.add_argument('--as-tenant', metavar='<project-id>',
                        help='(admin) show what this project sees: its '
                        'identifiers and surrogates instead of real ids')


def as_tenant_query(args) -> str:
    """The query string of ``--as-tenant`` (empty without it)."""
    return f'?as_tenant_id={args.as_tenant}' if args.as_tenant else ''


def _shown(value) -> str:
    """A value of a :class:`Mapping` in a table: as it is, quoted only if
    it holds the separators (``, `` or ``=``)."""
    text = str(value)
    return repr(text) if ', ' in text or '=' in text else text


class Mapping(cliff_columns.FormattableColumn):
    """A dict: ``k=v, k=v`` in tables, each value as it is (``2`` for the
    number 2: openstackclient's DictColumn quotes every value, ``'2'``);
    native in JSON and YAML."""

    def human_readable(self):
        return ', '.join(f'{k}={_shown(v)}'
                         for k, v in sorted(self._value.items()))

    def machine_readable(self):
        return dict(self._value)


def formatted(record: dict, columns: typing.Sequence[str]) -> list:
    """The values of ``columns``, lists and dicts as openstackclient shows
    them (``a, b`` / ``k=v`` in tables, native in JSON and YAML)."""
    values = []
    for column in columns:
        value = record.get(column)
        if isinstance(value, (list, tuple)):
            value = format_columns.ListColumn(value)
        elif isinstance(value, dict):
            value = Mapping(value)
        values.append(value)
    return values


def show(record: dict, columns: typing.Sequence[str]):
    """A ShowOne result: the present ``columns`` of ``record``."""
    present = [c for c in columns if c in record]
    return present, formatted(record, present)


def rows(records: typing.Iterable[dict], columns: typing.Sequence[str]):
    """A Lister result."""
    return tuple(columns), [formatted(r, columns) for r in records]


_LITERAL = re.compile(r'``([^`]+)``|:[a-z]+:`([^`<]+?)(?: <[^>]+>)?`')


def plain(text: str) -> str:
    """reStructuredText's inline markup of docstrings as plain text for
    ``--help``: ````audit```` and ``:doc:`x``` become ``audit``, ``x``."""
    return _LITERAL.sub(lambda m: m.group(1) or m.group(2), text)


class _Plain:
    """Help from the class docstring, without its markup."""

    def get_description(self) -> str:
        return plain(super().get_description())


class Command(_Plain, command.Command):
    """A command whose help is its docstring as plain text."""


class ShowOne(_Plain, command.ShowOne):
    """A ShowOne whose help is its docstring as plain text."""


class Lister(_Plain, command.Lister):
    """A Lister whose help is its docstring as plain text."""


PREFIX = 'scoped policy '


def one_line(description: str) -> str:
    """The first sentence of a command's help, on one line (a docstring's
    first line may stop mid-sentence)."""
    first = ' '.join(description.split('\n\n')[0].split())
    end = first.find('. ')
    return first if end < 0 else first[:end + 1]


def caller(app) -> typing.Optional[typing.Tuple[str, typing.List[str]]]:
    """(project id, roles) of the caller: those sent to a policy API run
    with ``noauth2`` (``--os-scoped-policies-roles``), else those of the
    Keystone token; None when neither is known."""
    manager = getattr(app, 'client_manager', None)
    if manager is None:
        return None
    options = plugin.global_options(manager)
    if options.get(plugin.ROLES) is not None:
        return (options.get(plugin.PROJECT_ID) or '',
                [r.strip() for r in options[plugin.ROLES].split(',')])
    try:
        ref = manager.auth_ref
    except Exception:   # no credentials, Keystone unreachable...
        return None
    if ref is None:
        return None
    return ref.project_id, list(ref.role_names)


def summaries(app, everything: bool = True
              ) -> typing.List[typing.Tuple[str, str]]:
    """(name, first sentence of its help) of every ``scoped policy``
    command of ``app``'s command manager, sorted by name; unless
    ``everything``, only those whose rule (the command's ``rule``) the
    caller's roles pass on its project, by the policy API's rules in code
    (the API decides, with the operator's policy file); every one when
    the roles are not known."""
    who = None if everything else caller(app)
    if who is not None:
        from nova_scoped_policies.api import policies
        rules = policies.Defaults()
    found = []
    for name, entry in app.command_manager:
        if not name.startswith(PREFIX):
            continue
        factory = entry.load()
        rule = getattr(factory, 'rule', None)
        if who is None or not rule or rules.allowed(rule, *who):
            found.append((name, one_line(
                factory(app, None).get_description())))
    return sorted(found)


class Overview(Command):
    """The scoped policy commands, each with what it does: those the
    caller's roles may run (a project's reader reads, its member writes,
    administrators do the rest), or every one with ``--all``.

    ``openstack scoped policy`` and ``openstack scoped policy --help``.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.description = self._listing(True)
        parser.add_argument('--all', action='store_true',
                            help='every command, also those your roles '
                            'may not run')
        return parser

    def _listing(self, everything: bool) -> str:
        found = summaries(self.app, everything)
        width = max((len(name) for name, _ in found), default=0)
        hidden = len(summaries(self.app)) - len(found)
        return ('Scoped, rule-limited and multi-level server group '
                'policies (the policy API).\n\ncommands:\n' + '\n'.join(
                    f'  {name.ljust(width)}  {line}' for name, line in found)
                + (f'\n\n{hidden} more command(s) need roles you do not '
                   'have (--all lists them)' if hidden else '')
                + '\n\n"openstack scoped policy <command> --help" tells '
                'more of each.')

    def take_action(self, args):
        self.app.stdout.write(self._listing(args.all) + '\n')


class Audit(ShowOne):
    """An audit command. With ``--exit-code`` it exits 1 when
    :meth:`take_action` found violations (``self.violated``), as ``git
    diff --exit-code`` does, for scripts and monitoring."""

    what = 'it'
    """What is audited, in the option's help."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        self.add_target(parser)
        as_tenant_option(parser)
        parser.add_argument('--exit-code', action='store_true',
                            help=f'exit 1 when {self.what} has violations')
        return parser

    def add_target(self, parser) -> None:
        """The positional argument naming what is audited."""
        raise NotImplementedError

    def run(self, parsed_args):
        self.violated = False
        status = super().run(parsed_args)
        if parsed_args.exit_code and self.violated:
            return 1
        return status
