"""``nova-scoped-policies-manage``: the policy store's schema.

``nova-scoped-policies-manage db sync`` creates or upgrades the database of
``[policy_store] connection`` to the newest schema, as ``nova-manage db
sync`` and ``placement-manage db sync`` do for theirs;
``nova-scoped-policies-manage db version`` prints the revision it is at.
``nova-scoped-policies db upgrade`` is the older name of ``db sync``.

``nova-scoped-policies-manage try`` runs Placement and the policy API on
this machine with a small seeded cloud, to try the service and its CLI
(:mod:`nova_scoped_policies.cmd.trial`), until Ctrl-C.
"""

import argparse
import signal
import sys

CONFIG_HELP = ('configuration file(s) with [policy_store] (default: '
               '/etc/nova-scoped-policies/nova-scoped-policies.conf)')


def _store(config_files):
    from oslo_config import cfg

    from nova_scoped_policies import conf as nsp_conf
    from nova_scoped_policies.db import api as store_api

    conf = cfg.ConfigOpts()
    nsp_conf.register_opts(conf)
    conf([], project='nova-scoped-policies',
         default_config_files=config_files or None)
    return store_api.PolicyStore(conf.policy_store.connection)


def _run(config_files, action) -> int:
    from oslo_db import exception as db_exc

    try:
        print(action(_store(config_files).engine))
    except db_exc.DBError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(f'error: [policy_store] connection: {first[:300]}',
              file=sys.stderr)
        return 1
    return 0


def db_sync(args) -> int:
    """Bring the schema to the newest revision; safe to run again."""
    from nova_scoped_policies.db import migration

    def sync(engine):
        migration.upgrade(engine)
        return f'policy store at revision {migration.version(engine)}'
    return _run(args.config_file, sync)


def db_version(args) -> int:
    """Print the schema revision (None for an empty database)."""
    from nova_scoped_policies.db import migration
    return _run(args.config_file, migration.version)


def add_db_commands(db_sub, sync_names=('sync',)) -> None:
    """The ``db`` sub-commands, shared with ``nova-scoped-policies db``.

    :param db_sub: the argparse sub-parsers of ``db``.
    :param sync_names: the name of ``sync`` and its aliases.
    """
    name, *aliases = sync_names
    sync = db_sub.add_parser(
        name, aliases=aliases,
        help='create or upgrade the policy store schema',
        description='Bring the database of [policy_store] connection to '
        'the newest schema. Safe to run again.')
    sync.add_argument('--config-file', action='append', metavar='FILE',
                      help=CONFIG_HELP)
    sync.set_defaults(func=db_sync)
    version = db_sub.add_parser(
        'version', help='print the policy store schema revision')
    version.add_argument('--config-file', action='append', metavar='FILE',
                         help=CONFIG_HELP)
    version.set_defaults(func=db_version)


class _Stop(BaseException):
    """SIGINT or SIGTERM: stop."""


def _stop(signum, frame):
    raise _Stop()


def try_service(args) -> int:
    """Start, seed, print the CLI's environment, serve until SIGINT or
    SIGTERM; then stop the children and remove the directory."""
    from nova_scoped_policies.cmd import trial

    # both set here: a shell starting a command in the background (&)
    # ignores SIGINT for it, which Python would keep
    previous = {sig: signal.signal(sig, _stop)
                for sig in (signal.SIGINT, signal.SIGTERM)}
    service = trial.Trial(args.port, args.placement_port)
    try:
        service.start()
        service.seed()
        print(f'# Placement (noauth2): {service.placement_url}\n'
              f'# policy API (noauth2): {service.url}')
        for line in service.describe():
            print(f'# {line}')
        print('# in another shell, for openstack scoped policy ...:')
        for name, value in service.environment().items():
            print(f'export {name}={value}')
        print(f'# Ctrl-C stops both and removes {service.directory}',
              flush=True)
        while True:
            signal.pause()
    except trial.StartError as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 1
    except _Stop:
        return 0
    finally:
        # a second Ctrl-C does not cut the stop short
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        service.stop()
        print(f'# stopped; {service.directory} removed', file=sys.stderr)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='nova-scoped-policies-manage',
        description='Manage the nova-scoped-policies policy store.')
    sub = parser.add_subparsers(dest='command', required=True)
    db = sub.add_parser('db', help='the policy store database')
    add_db_commands(db.add_subparsers(dest='db_command', required=True))
    trial = sub.add_parser(
        'try', help='run the service on this machine to try it',
        description='Start a real Placement and the policy API (both '
        'noauth2, on SQLite in a temporary directory), seed six hosts in '
        'three racks, four servers and a server group, and print the '
        'environment of "openstack scoped policy". Ctrl-C stops both and '
        'removes the directory. For trying and demonstrations only.')
    trial.add_argument('--port', type=int, default=8799, metavar='PORT',
                       help='the policy API\'s port (0: any free one; '
                       'default: 8799)')
    trial.add_argument('--placement-port', type=int, default=8778,
                       metavar='PORT', help='Placement\'s port (0: any free '
                       'one; default: 8778)')
    trial.set_defaults(func=try_service)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == '__main__':
    sys.exit(main())
