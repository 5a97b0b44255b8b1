"""``--plot FILE.png``: members per domain, one panel per scope of every
group, then the servers of each stack decision per domain, one panel per
scope of every stack.

A scope of at most :data:`BAR_LIMIT` domains is drawn as labelled bars, a
larger one (hundreds of racks) as a heatmap: a grid of its domains, in
natural order, coloured by member count, each row labelled with its first
and last domain. Each panel shows the ``max_server_per_<scope>`` limit (or
the limit of 1 of a hard ``anti-affinity:<scope>``) in its legend, marks
the domains over it, and counts the group's failed servers. The figure
stays bounded: at most :data:`MAX_PANELS` panels, at most
:data:`MAX_HEIGHT` inches high; the panels left out are named at the
bottom.

Needs matplotlib (``pip install nova-scoped-policies[plot]``).
"""

import collections
import math
import typing

from nova_scoped_policies.simulator import report

BAR_LIMIT = 40
"""Above this many domains, a scope is drawn as a heatmap."""
MAX_COLUMNS = 50
"""The most domains in a row of a heatmap."""
MAX_ROW_LABELS = 16
"""The most labelled rows of a heatmap (every k-th row beyond)."""
MAX_PANELS = 20
"""The most panels in one figure."""
MAX_HEIGHT = 40.0
"""The most inches of figure height."""
WIDTH = 12.0
"""The figure width in inches."""
FAILED = '#d62728'
AT_LIMIT = '#ff7f0e'
OVER_LIMIT = '#d62728'


class PlotUnavailable(RuntimeError):
    pass


class Panel(typing.NamedTuple):
    """One panel of the figure.

    :param owner: ``group`` or ``stack``.
    :param name: the group or stack name.
    :param scope: the scope it draws; None for a group without scopes.
    :param kind: ``bars``, ``heatmap`` or ``empty``.
    :param domains: how many domains it draws.
    :param limit: the most servers per domain it shows, or None.
    :param over: how many domains hold more than ``limit``.
    :param failed: how many of the group's (stack's) servers failed.
    :param title: the panel title.
    :param axes: the matplotlib Axes (None for a panel left out).
    """

    owner: str
    name: str
    scope: typing.Optional[str]
    kind: str
    domains: int
    limit: typing.Optional[int]
    over: int
    failed: int
    title: str
    axes: typing.Any = None


class Drawing(typing.NamedTuple):
    """What :func:`plot` drew.

    :param figure: the matplotlib Figure (closed, still readable).
    :param panels: the panels drawn, top to bottom.
    :param omitted: the panels left out to keep the figure bounded.
    """

    figure: typing.Any
    panels: typing.List[Panel]
    omitted: typing.List[Panel]


class _Spec(typing.NamedTuple):
    """A panel to draw: its :class:`Panel` and its data."""

    panel: Panel
    names: typing.List[str]
    counts: typing.Mapping[str, int]
    ylabel: str
    limit_label: str


def plot(result: dict, path: str, topology) -> Drawing:
    """Draw the final audit of every group and every stack decision into a
    PNG file.

    :param result: the simulation result.
    :param path: the PNG file to write.
    :param topology: the scenario topology (to show empty domains too).
    :returns: the figure and its panels.
    :raises PlotUnavailable: matplotlib is not installed, or there is
        nothing to plot.
    :raises OSError: the file cannot be written.
    """
    matplotlib, pyplot = _matplotlib()
    if not result['audit'] and not result.get('plans'):
        raise PlotUnavailable('--plot: the scenario has no group or stack '
                              'to plot')
    specs = _group_specs(result, topology) + _plan_specs(result, topology)
    drawn: typing.List[_Spec] = []
    height = 0.8
    for spec in specs:
        needed = _height(spec)
        if len(drawn) >= MAX_PANELS or (drawn and
                                        height + needed > MAX_HEIGHT):
            break
        drawn.append(spec)
        height += needed
    omitted = [s.panel for s in specs[len(drawn):]]
    if omitted:
        height += 0.4
    figure = pyplot.figure(figsize=(WIDTH, min(height, MAX_HEIGHT)),
                           layout='constrained')
    try:
        grid = figure.add_gridspec(len(drawn), 1,
                                   height_ratios=[_height(s) for s in drawn])
        panels = []
        for n, spec in enumerate(drawn):
            ax = figure.add_subplot(grid[n, 0])
            panels.append(_draw(figure, ax, spec, matplotlib))
        stats = result['stats']
        figure.suptitle(f'{stats["placed"]} servers placed, '
                        f'{len(result["failures"])} failed',
                        fontsize=10, fontweight='bold')
        if omitted:
            names = ', '.join(f'{p.name}/{p.scope or "-"}'
                              for p in omitted[:8])
            more = ', ...' if len(omitted) > 8 else ''
            figure.supxlabel(f'{len(omitted)} more panel(s) not drawn (at '
                             f'most {MAX_PANELS} panels, {MAX_HEIGHT:g} '
                             f'inches): {names}{more}', fontsize=8)
        figure.savefig(path, dpi=100)
    finally:
        pyplot.close(figure)
    return Drawing(figure, panels, omitted)


def _matplotlib():
    """matplotlib (drawing to files) and its pyplot.

    :raises PlotUnavailable: matplotlib is not installed.
    """
    try:
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib import pyplot
    except ImportError as exc:
        raise PlotUnavailable('--plot needs matplotlib: pip install '
                              f'"nova-scoped-policies[plot]" ({exc})')
    return matplotlib, pyplot


MAX_CASES = 150
"""The most domains (columns) a resilience heatmap draws: beyond, only
the cases that break, worst first."""


class Sweep(typing.NamedTuple):
    """What a resilience plot drew.

    :param kind: ``heatmap`` (N-1: cases x groups) or ``bars`` (N-k: each
        group's share of broken cases) or ``survived`` (nothing broke).
    :param groups: the groups drawn, top to bottom.
    :param cases: the cases drawn (heatmap), worst first.
    """

    kind: str
    groups: typing.List[str]
    cases: typing.List[str]


def resilience(sweep: dict, path: str) -> Sweep:
    """Draw a resilience sweep into a PNG file: for N-1, a heatmap of the
    domains failed (every one, in natural order; beyond :data:`MAX_CASES`
    only those whose failure breaks something, worst first) against the
    groups they break, coloured by how many of the group's servers or
    policies break; for N-k, each group's share of the cases that break
    it.

    :param sweep: one entry of the report's ``resilience``.
    :raises PlotUnavailable: matplotlib is not installed.
    :raises OSError: the file cannot be written.
    """
    _, pyplot = _matplotlib()
    groups = sorted(sweep['groups'], key=lambda g: (
        -sweep['groups'][g]['broken_in'], report.natural(g)))
    title = (f'{sweep["fail"]}: {sweep["count"]} at once, '
             f'{sweep["survived"]} of {sweep["cases"]} cases survive')
    broken = sweep['broken'][:MAX_CASES]
    if not groups:
        figure = pyplot.figure(figsize=(6, 1.5), layout='constrained')
        figure.suptitle(title, fontsize=10, fontweight='bold')
        drawn = Sweep('survived', [], [])
    elif sweep['count'] == 1:
        # every domain, in natural order, when they fit: the ones that
        # survive show as blank columns beside those that break
        found = {case['domains'][0]: case for case in sweep['broken']}
        every = sorted(sweep['headroom'], key=report.natural)
        shown = every if len(every) <= MAX_CASES else [
            case['domains'][0] for case in broken]
        labels = list(shown)
        grid = [[len(found[d]['groups'].get(g, ())) if d in found else 0
                 for d in shown] for g in groups]
        figure, ax = pyplot.subplots(
            figsize=(max(7.0, min(WIDTH, 3 + 0.2 * len(labels))),
                     min(MAX_HEIGHT, 2.5 + 0.3 * len(groups))),
            layout='constrained')
        image = ax.imshow(grid, cmap='Reds', aspect='auto', vmin=0)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
        ax.set_yticks(range(len(groups)), groups, fontsize=8)
        ax.set_xlabel(f'{sweep["fail"]} failed' + (
            '' if shown is every else ' (the cases that break, worst '
            'first' + (f'; {len(sweep["broken"]) - MAX_CASES} more not '
                       'drawn' if len(sweep['broken']) > MAX_CASES
                       else '') + ')'))
        figure.colorbar(image, ax=ax, label='servers or policies broken')
        figure.suptitle(title, fontsize=10, fontweight='bold')
        drawn = Sweep('heatmap', groups, labels)
    else:
        shares = [sweep['groups'][g]['broken_in'] / sweep['cases']
                  for g in groups]
        figure, ax = pyplot.subplots(
            figsize=(8, min(MAX_HEIGHT, 2.0 + 0.3 * len(groups))),
            layout='constrained')
        ax.barh(range(len(groups)), shares, color=FAILED)
        ax.set_yticks(range(len(groups)), groups, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel('share of the cases that break the group')
        figure.suptitle(title, fontsize=10, fontweight='bold')
        drawn = Sweep('bars', groups, [])
    try:
        figure.savefig(path, dpi=100)
    finally:
        pyplot.close(figure)
    return drawn


def _height(spec: _Spec) -> float:
    """Inches of figure height a panel takes."""
    if spec.panel.kind == 'heatmap':
        return min(7.0, 2.0 + 0.3 * _rows(spec.panel.domains))
    if spec.panel.kind == 'empty':
        return 0.9
    return 3.2


def _columns(domains: int) -> int:
    """The columns of a heatmap of ``domains`` domains: a wide grid."""
    return max(1, min(MAX_COLUMNS, domains,
                      math.ceil(math.sqrt(domains * 3))))


def _rows(domains: int) -> int:
    return math.ceil(domains / _columns(domains))


def _limit(data: dict,
           scope: str) -> typing.Tuple[typing.Optional[int], str]:
    """The most members of a group per domain of ``scope`` and where it
    comes from: its ``max_server_per_<scope>`` rule, else 1 for a hard
    ``anti-affinity:<scope>``; (None, '') for none."""
    rule = f'max_server_per_{scope}'
    most = data['policies']['rules'].get(rule)
    if most is not None:
        return most, rule
    if f'anti-affinity:{scope}' in data['policies']['policies']:
        return 1, f'anti-affinity:{scope}'
    return None, ''


def _failed_boots(result: dict) -> typing.Set[str]:
    """The servers that failed to boot (a failed move leaves its server
    where it was)."""
    return {f['server'] for f in result['failures'] if 'why' not in f}


def _group_specs(result: dict, topology) -> typing.List[_Spec]:
    failures = _failed_boots(result)
    specs = []
    for name, data in sorted(result['audit'].items(),
                             key=lambda item: report.natural(item[0])):
        members = data['members']
        failed = sum(1 for m in members
                     if not m['host'] and m['server'] in failures)
        placed = sum(1 for m in members if m['host'])
        policies = ', '.join(data['policies']['policies']) or 'no policy'
        if len(policies) > 70:
            policies = policies[:67] + '...'
        head = f'group {name} ({policies}): {placed} placed'
        if failed:
            head += f', {failed} FAILED'
        if data['violations']:
            head += f', {len(data["violations"])} violation(s)'
        scopes = _scopes(data)
        if not scopes:
            specs.append(_Spec(Panel('group', name, None, 'empty', 0, None,
                                     0, failed, head), [], {}, 'members',
                               ''))
        for scope in scopes:
            counts = collections.Counter(
                d for m in members if m['host']
                for d in (m['domains'].get(scope) or '').split(',') if d)
            names = _domains(topology, scope, counts)
            limit, source = _limit(data, scope)
            over = sum(1 for n in names if limit is not None
                       and counts.get(n, 0) > limit)
            kind = 'heatmap' if len(names) > BAR_LIMIT else 'bars'
            title = f'{head}  |  {scope}: {len(names)} domains'
            specs.append(_Spec(
                Panel('group', name, scope, kind, len(names), limit, over,
                      failed, title), names, counts, 'members',
                f'limit {limit} ({source})' if limit is not None else ''))
    return specs


def _plan_specs(result: dict, topology) -> typing.List[_Spec]:
    failures = _failed_boots(result)
    specs = []
    for name, plan in sorted(result.get('plans', {}).items(),
                             key=lambda item: report.natural(item[0])):
        hosts = list(plan['assignments'].values())
        failed = sum(1 for s in plan['assignments'] if s in failures)
        head = (f'stack {name}: {plan["status"]}'
                f'{", confirmed" if plan.get("confirmed") else ""}, '
                f'{len(hosts)} servers decided')
        if failed:
            head += f', {failed} FAILED to boot'
        if plan['reason']:
            head += f' ({plan["reason"][:80]})'
        scopes = [s for s in topology.scope_names if s != 'host'
                  and topology.domains(s)] or ['host']
        for scope in scopes:
            counts = collections.Counter(
                topology.domain_name(d) for h in hosts
                for d in topology.domains_of(scope, h))
            names = _domains(topology, scope, counts)
            kind = 'heatmap' if len(names) > BAR_LIMIT else 'bars'
            specs.append(_Spec(
                Panel('stack', name, scope, kind, len(names), None, 0,
                      failed, f'{head}  |  {scope}: {len(names)} domains'),
                names, counts, 'decided servers', ''))
    return specs


def _domains(topology, scope: str,
             counts: typing.Mapping[str, int]) -> typing.List[str]:
    """The domains of ``scope`` to draw, in natural order: all of a
    deployer scope (the empty ones too), the hosts that hold a server."""
    names = set(counts)
    if scope != 'host':
        names |= {d.name for d in topology.domains(scope)}
    return sorted(names, key=report.natural)


def _draw(figure, ax, spec: _Spec, matplotlib) -> Panel:
    panel = spec.panel._replace(axes=ax)
    if panel.kind == 'empty':
        ax.set_axis_off()
        ax.text(0.5, 0.5, 'no member' + (
            f', {panel.failed} failed' if panel.failed else ''),
            ha='center', va='center', transform=ax.transAxes,
            color=FAILED if panel.failed else 'black')
    elif panel.kind == 'heatmap':
        _heatmap(figure, ax, spec, matplotlib)
    else:
        _bars(ax, spec, matplotlib)
    ax.set_title(panel.title, fontsize=9, loc='left',
                 color=FAILED if panel.failed else 'black')
    return panel


def _failed_handle(patches, failed: int):
    return patches.Patch(facecolor='white', edgecolor=FAILED, hatch='///',
                         label=f'{failed} failed (no host)')


def _bars(ax, spec: _Spec, matplotlib) -> None:
    """Labelled bars, one per domain, and a hatched one for the failed."""
    from matplotlib import lines
    from matplotlib import patches
    from matplotlib import ticker
    panel = spec.panel
    colour = '#1f77b4' if panel.owner == 'group' else '#2ca02c'
    heights = [spec.counts.get(n, 0) for n in spec.names]
    limit = panel.limit
    colours = [OVER_LIMIT if limit is not None and h > limit else colour
               for h in heights]
    ax.bar(range(len(heights)), heights, color=colours)
    labels = list(spec.names)
    handles = [patches.Patch(color=colour,
                             label=f'{spec.ylabel} per {panel.scope}')]
    if limit is not None:
        ax.axhline(limit, color='black', linestyle='dashed', linewidth=1)
        handles.append(lines.Line2D([], [], color='black',
                                    linestyle='dashed',
                                    label=spec.limit_label))
    if panel.over:
        handles.append(patches.Patch(
            color=OVER_LIMIT, label=f'over the limit ({panel.over})'))
    if panel.failed:
        ax.bar([len(labels)], [panel.failed], color='white',
               edgecolor=FAILED, hatch='///')
        ax.annotate(f'{panel.failed} failed', (len(labels), panel.failed),
                    xytext=(0, 2), textcoords='offset points',
                    ha='center', va='bottom', fontsize=8, color=FAILED)
        labels.append('failed')
        handles.append(_failed_handle(patches, panel.failed))
    ax.set_xticks(range(len(labels)), labels,
                  rotation=60 if len(labels) > 10 else 0,
                  ha='right' if len(labels) > 10 else 'center', fontsize=7)
    if panel.failed:
        ax.get_xticklabels()[-1].set_color(FAILED)
    ax.set_xlim(-0.6, max(len(labels), 4) - 0.4)
    top = max(heights + [limit or 0, panel.failed, 1])
    ax.set_ylim(0, top * 1.25 + 0.2)
    ax.set_ylabel(spec.ylabel, fontsize=8)
    ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax.legend(handles=handles, fontsize=7, loc='upper left',
              bbox_to_anchor=(1.005, 1.0), borderaxespad=0)


def _heatmap(figure, ax, spec: _Spec, matplotlib) -> None:
    """A grid of the domains coloured by count, rows labelled with their
    first and last domain, the domains at and over the limit marked."""
    from matplotlib import colors
    from matplotlib import lines
    from matplotlib import patches
    from matplotlib import ticker
    from matplotlib import transforms
    panel = spec.panel
    names = spec.names
    columns = _columns(len(names))
    rows = _rows(len(names))
    # cells past the last domain stay NaN: the colour map's "bad" grey
    grid = [[math.nan] * columns for _ in range(rows)]
    for i, name in enumerate(names):
        grid[i // columns][i % columns] = spec.counts.get(name, 0)
    limit = panel.limit
    top = max([spec.counts.get(n, 0) for n in names] + [limit or 0, 1])
    cmap = matplotlib.colormaps['YlGnBu'].with_extremes(bad='#eeeeee')
    norm = colors.BoundaryNorm([b - 0.5 for b in range(top + 2)], cmap.N)
    image = ax.imshow(grid, cmap=cmap, norm=norm, aspect='auto',
                      interpolation='nearest')
    # next to its grid, whatever the legends of the other panels need
    bar = figure.colorbar(image, cax=ax.inset_axes([1.01, 0.0, 0.012, 1.0]))
    bar.set_label(spec.ylabel, fontsize=8)
    bar.set_ticks([t for t in ticker.MaxNLocator(
        integer=True, nbins=6).tick_values(0, top) if 0 <= t <= top])
    bar.ax.tick_params(labelsize=7)
    if rows * columns <= 2500:
        ax.set_xticks([c - 0.5 for c in range(columns + 1)], minor=True)
        ax.set_yticks([r - 0.5 for r in range(rows + 1)], minor=True)
        ax.grid(which='minor', color='white', linewidth=0.6)
        ax.tick_params(which='minor', length=0)
    step = math.ceil(rows / MAX_ROW_LABELS)
    shown = list(range(0, rows, step))
    ax.set_yticks(shown, [
        f'{names[r * columns]} … '
        f'{names[min(len(names), (r + 1) * columns) - 1]}' for r in shown],
        fontsize=7)
    xticks = ticker.MaxNLocator(integer=True, nbins=10).tick_values(
        1, columns)
    xticks = [int(t) for t in xticks if 1 <= t <= columns]
    ax.set_xticks([t - 1 for t in xticks], [str(t) for t in xticks],
                  fontsize=7)
    which = (f'the {len(names)} hosts that hold one' if panel.scope ==
             'host' else f'all {len(names)} {panel.scope} domains')
    ax.set_xlabel(f'n-th {panel.scope} of the row ({columns} per row; '
                  f'{which}, in natural order)', fontsize=8)
    handles = []
    size = _marker_size(spec, rows, columns)
    if limit is not None:
        at = [(i // columns, i % columns) for i, n in enumerate(names)
              if spec.counts.get(n, 0) == limit]
        over = [(i // columns, i % columns) for i, n in enumerate(names)
                if spec.counts.get(n, 0) > limit]
        if at:
            ax.scatter([c for _, c in at], [r for r, _ in at], s=size,
                       marker='o', facecolors='none', edgecolors=AT_LIMIT,
                       linewidths=1.2)
        if over:
            ax.scatter([c for _, c in over], [r for r, _ in over],
                       s=size * 1.3, marker='X', color=OVER_LIMIT,
                       edgecolors='white', linewidths=0.5)
        handles.append(lines.Line2D(
            [], [], marker='o', linestyle='none', markerfacecolor='none',
            markeredgecolor=AT_LIMIT,
            label=f'at the {spec.limit_label}: {len(at)}'))
        handles.append(lines.Line2D(
            [], [], marker='X', linestyle='none', color=OVER_LIMIT,
            label=f'over the limit: {len(over)}'))
    if panel.failed:
        handles.append(_failed_handle(patches, panel.failed))
    if handles:
        # below the column numbers and their label
        below = transforms.offset_copy(ax.transAxes, figure, y=-26,
                                       units='points')
        ax.legend(handles=handles, fontsize=7, loc='upper left',
                  bbox_to_anchor=(0.0, 0.0), bbox_transform=below,
                  ncol=len(handles), frameon=False)
    ax.set_xlim(-0.5, columns - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)


def _marker_size(spec: _Spec, rows: int, columns: int) -> float:
    """A marker area (points squared) that fits in a heatmap cell."""
    cell = min(WIDTH * 0.75 * 72 / columns,
               max(0.5, _height(spec) - 1.5) * 72 / rows)
    return max(4.0, (cell * 0.5) ** 2)


def _scopes(data) -> typing.List[str]:
    scopes = sorted({s for m in data['members'] for s in m['domains']})
    # deployer scopes first; hosts last
    return [s for s in scopes if s != 'host'] + \
        (['host'] if 'host' in scopes else [])
