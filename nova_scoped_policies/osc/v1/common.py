"""What the commands share: the client, names for ids, output columns."""

import typing

from osc_lib.cli import format_columns
from osc_lib.command import command
from osc_lib import exceptions
from oslo_utils import uuidutils


def client(cmd):
    """The policy API client of a command."""
    return cmd.app.client_manager.scoped_policies


def compute(cmd, what: str):
    """openstacksdk's compute proxy, to find Nova resources by name.

    :param what: what is looked up, for the error without a compute
        endpoint (``--os-auth-type none``).
    """
    try:
        return cmd.app.client_manager.compute
    except Exception as exc:  # no catalog, no endpoint, no auth
        raise exceptions.CommandError(
            f'{what}: a name needs Nova to look it up ({exc}); give the '
            'uuid instead')


def nova_id(cmd, value: str, kind: str) -> str:
    """``value`` as a uuid: itself, or the one Nova resource so named.

    :param value: a uuid or a name.
    :param kind: ``aggregate``, ``server`` or ``server_group``.
    """
    if uuidutils.is_uuid_like(value):
        return value
    finder = getattr(compute(cmd, f'{kind} {value!r}'), f'find_{kind}')
    try:
        found = finder(value, ignore_missing=False)
    except Exception as exc:  # NotFound, DuplicateResource...
        raise exceptions.CommandError(f'{kind.replace("_", " ")} '
                                      f'{value!r}: {exc}')
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


def formatted(record: dict, columns: typing.Sequence[str]) -> list:
    """The values of ``columns``, lists and dicts as openstackclient shows
    them (``a, b`` / ``k='v'`` in tables, native in JSON and YAML)."""
    values = []
    for column in columns:
        value = record.get(column)
        if isinstance(value, (list, tuple)):
            value = format_columns.ListColumn(value)
        elif isinstance(value, dict):
            value = format_columns.DictColumn(value)
        values.append(value)
    return values


def show(record: dict, columns: typing.Sequence[str]):
    """A ShowOne result: the present ``columns`` of ``record``."""
    present = [c for c in columns if c in record]
    return present, formatted(record, present)


def rows(records: typing.Iterable[dict], columns: typing.Sequence[str]):
    """A Lister result."""
    return tuple(columns), [formatted(r, columns) for r in records]


class Audit(command.ShowOne):
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
