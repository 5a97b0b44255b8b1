"""``nova-scoped-policies``: the operator's command line.

``nova-scoped-policies simulate SCENARIO.yaml`` runs a what-if scenario
(shared/contracts/simulation.md) through the scheduler plugins against an
embedded Placement with the fast engine
(:mod:`nova_scoped_policies.simulator.fast`), or nova's own path with
``--engine nova`` or a real Placement (``--placement-url``).
``nova-scoped-policies db upgrade`` is ``nova-scoped-policies-manage db sync``
(:mod:`nova_scoped_policies.cmd.manage`).
"""

import argparse
import contextlib
import gc
import os
import sys
import time
import typing

from nova_scoped_policies.cmd import manage


class _Bar:
    """The simulation's progress on ``stream`` with rich: the hosts as
    they are built, then the servers as they are booted (placed or
    failed). A context manager: the bar stops with the simulation."""

    def __init__(self, stream) -> None:
        from rich import console
        from rich import progress
        self._bar = progress.Progress(
            progress.TextColumn('{task.description:>7}'),
            progress.BarColumn(), progress.MofNCompleteColumn(),
            progress.TimeElapsedColumn(),
            console=console.Console(file=stream))
        self._task = None

    def __enter__(self) -> '_Bar':
        self._bar.start()
        return self

    def __exit__(self, *exc) -> None:
        self._bar.stop()

    def phase(self, name: str, total: int) -> None:
        self._task = self._bar.add_task(name, total=total)

    def advance(self, done: int = 1) -> None:
        self._bar.advance(self._task, done)


@contextlib.contextmanager
def _lasting():
    """Python's cyclic garbage collector kept off while the ``with`` block
    makes objects that all live as long as the simulation (nova's modules
    and ours, the scenario, the simulation), then those frozen out of its
    sight (``gc.freeze``): no collection walks them again and again for
    nothing (about 0.5 s of start-up, most of it while modules are
    imported)."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def simulate(args) -> int:
    """The ``simulate`` command. What it froze out of the collector's
    sight (:func:`_lasting`, then the world: ``Simulation.run``) stays
    frozen when the process ends with it (``args.to_exit``): the
    interpreter's collections at exit would walk it all again (over 1 s
    at 100,000 hosts); an in-process caller's collector is given back as
    it was."""
    if args.to_exit:
        # eventlet's own switch, read when nova's libraries import it: no
        # green resolver (dnspython, about 0.15 s to import) for green
        # sockets, which a process that never runs on eventlet has none of
        os.environ.setdefault('EVENTLET_NO_GREENDNS', 'yes')
    frozen = gc.get_freeze_count()
    try:
        return _simulate(args)
    finally:
        if not frozen and not args.to_exit:
            gc.unfreeze()


def _simulate(args) -> int:
    # eventlet's deprecation warning, which nova's libraries would print
    # on import: silenced by importing this package (cmd/__init__)
    with _lasting():
        from nova_scoped_policies.placement import client as pc
        from nova_scoped_policies.simulator import engines
        from nova_scoped_policies.simulator import report
        from nova_scoped_policies.simulator import scenario as sc
        from nova_scoped_policies.simulator import sweep

        try:
            scenario = sc.load(args.scenario, _asked(args))
        except sc.ScenarioError as exc:
            print(f'error: {args.scenario}: {exc}', file=sys.stderr)
            return 2
        if args.engine is None:
            # fast on the embedded Placement; nova's path on a real one
            args.engine = 'nova' if args.placement_url else 'fast'
        if args.engine == 'fast' and args.placement_url:
            print('error: --engine fast: runs on the embedded Placement '
                  'only; drop --placement-url or use --engine nova',
                  file=sys.stderr)
            return 2
        opened = engines.simulation(scenario, args.engine,
                                    args.placement_url, args.placement_token)
    try:
        with opened as simulation:
            simulation.sweep = sweep.Options(
                args.workers, args.scheduler, args.engine,
                portable=not args.placement_url)
            sweep.check(simulation.sweep)
            simulation.placement.check_version()
            if sys.stderr.isatty():
                with _Bar(sys.stderr) as bar:
                    result = simulation.run(bar)
            else:
                result = simulation.run()
    except pc.PlacementError as exc:
        print(f'error: Placement: {exc}', file=sys.stderr)
        return 1
    except sweep.Unreachable as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2
    # as a user waits: from the start of this process to the report
    import psutil
    result['stats']['process_seconds'] = round(
        time.time() - psutil.Process().create_time(), 3)
    if args.format == 'json':
        out = report.to_json(result)
    elif args.command == 'resilience':
        out = report.resilience_table(result)
    else:
        out = report.to_table(result)
    print(out, flush=True)
    if args.plot:
        # the report is out first: a plot that fails never loses it
        from nova_scoped_policies.simulator import plot
        try:
            if args.command == 'resilience':
                plot.resilience(result['resilience'][-1], args.plot)
            else:
                plot.plot(result, args.plot, scenario.topology())
        except (plot.PlotUnavailable, OSError) as exc:
            print(f'error: --plot {args.plot}: {exc}', file=sys.stderr)
            return 1
    return 0


def _asked(args) -> typing.List[dict]:
    """The ``resilience`` command's request, after the scenario's."""
    if args.command != 'resilience':
        return []
    body = {'fail': args.fail, 'count': args.count, 'seed': args.seed}
    if args.cases is not None:
        body['cases'] = args.cases
    if args.groups:
        body['groups'] = args.groups
    return [{'resilience': body}]


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f'{text}: must be >= 0')
    return value


def _run_options(command) -> None:
    """The options ``simulate`` and ``resilience`` share."""
    command.add_argument('scenario', help='the scenario YAML file')
    command.add_argument('--format', choices=('table', 'json'),
                         default='table')
    command.add_argument('--placement-url',
                         help='use this Placement instead of the embedded '
                         'one; it must be a scratch Placement: the '
                         'scenario creates its providers and allocations '
                         'there (resilience sweeps then run in this '
                         'process)')
    command.add_argument('--engine', choices=('nova', 'fast'), default=None,
                         help='fast (default on the embedded Placement): '
                         'the same decisions as nova, with the handlers '
                         'run once per class of identical hosts and the '
                         'embedded Placement called in-process. nova '
                         '(default with --placement-url): every host '
                         'through nova\'s filter and weight handlers and '
                         'Placement over HTTP, as nova-scheduler does')
    command.add_argument('--placement-token', default='admin',
                         help='X-Auth-Token for --placement-url (default: '
                         '"admin", for Placement with auth_strategy='
                         'noauth2)')
    where = command.add_mutually_exclusive_group()
    where.add_argument('--workers', type=_non_negative, default=None,
                       metavar='N',
                       help='resilience sweeps: run the cases on a local '
                       'Dask cluster of N worker processes (default: one '
                       'per core this process may use; 0: in this '
                       'process; a sweep of fewer than 8 cases always '
                       'runs in this process)')
    where.add_argument('--scheduler', metavar='ADDRESS',
                       help='resilience sweeps: run the cases on the '
                       'workers of this running Dask scheduler (e.g. '
                       'tcp://10.0.0.5:8786); each needs this package '
                       'and nova installed')


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='nova-scoped-policies',
        description='Tools for scoped server group policies.')
    sub = parser.add_subparsers(dest='command', required=True)
    sim = sub.add_parser(
        'simulate', help='run a what-if scheduling scenario',
        description='Run a scenario (scopes, aggregates, hosts, groups, '
        'boots) through the same request filters, host filters and '
        'weighers as nova-scheduler, against an embedded Placement.')
    _run_options(sim)
    sim.add_argument('--plot', metavar='FILE.png',
                     help='also draw members per domain, one panel per '
                     'scope of each group and stack (a heatmap beyond 40 '
                     'domains), with limits and failed servers (needs '
                     'matplotlib)')
    sim.set_defaults(func=simulate)
    res = sub.add_parser(
        'resilience', help='what if domains fail: can the cloud lose any '
        'rack and keep every promise?',
        description='Run the scenario\'s requests, then fail COUNT '
        'domains of a scope at once, for every combination (or a seeded '
        'sample): each case evacuates their servers through the '
        'scheduler, audits every group and stack, and changes nothing '
        'outside itself. Prints the cases that break, worst first, the '
        'groups at risk and the headroom left per failed domain.')
    _run_options(res)
    res.add_argument('--fail', required=True, metavar='SCOPE',
                     help='the scope whose domains fail: host or a scope '
                     'of the scenario (rack, zone, ...)')
    res.add_argument('--count', type=int, default=1, metavar='K',
                     help='domains failed together in each case '
                     '(default 1: N-1)')
    res.add_argument('--cases', type=int, default=None, metavar='N',
                     help='at most N cases, drawn with --seed (default: '
                     'every combination)')
    res.add_argument('--seed', type=int, default=0,
                     help='what the draw of --cases starts from '
                     '(default 0)')
    res.add_argument('--group', dest='groups', action='append',
                     metavar='GROUP',
                     help='judge only this group\'s servers and policies '
                     '(repeat for several; default: every group)')
    res.add_argument('--plot', metavar='FILE.png',
                     help='also draw a heatmap: domains failed x groups '
                     'broken (N-1), or the share of cases that break each '
                     'group (needs matplotlib)')
    res.set_defaults(func=simulate)
    db = sub.add_parser(
        'db', help='manage the policy store database (also '
        'nova-scoped-policies-manage db)')
    manage.add_db_commands(
        db.add_subparsers(dest='db_command', required=True),
        sync_names=('upgrade', 'sync'))
    return parser


def main(argv=None) -> int:
    """Run the command of ``argv``; None: of this process's command line
    (the console script, ``python -m``), which ends with the command."""
    args = build_parser().parse_args(argv)
    args.to_exit = argv is None
    return args.func(args)


if __name__ == '__main__':
    sys.exit(main())
