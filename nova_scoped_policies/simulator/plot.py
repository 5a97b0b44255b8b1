"""``--plot FILE.png``: members per domain per scope, one panel per group,
then the servers of each stack decision per domain, one panel per stack.

Needs matplotlib (``pip install nova-scoped-policies[plot]``).
"""

import collections
import typing


class PlotUnavailable(RuntimeError):
    pass


def plot(result: dict, path: str, topology) -> None:
    """Draw the final audit of every group into a PNG file.

    :param result: the simulation result.
    :param path: the PNG file to write.
    :param topology: the scenario topology (to show empty domains too).
    :raises PlotUnavailable: matplotlib is not installed.
    """
    try:
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib import patches
        from matplotlib import pyplot
        from matplotlib import ticker
    except ImportError as exc:
        raise PlotUnavailable('--plot needs matplotlib: pip install '
                              f'"nova-scoped-policies[plot]" ({exc})')
    groups = sorted(result['audit'].items())
    plans = sorted(result.get('plans', {}).items())
    if not groups and not plans:
        raise PlotUnavailable('--plot: the scenario has no group or stack '
                              'to plot')
    panels = len(groups) + len(plans)
    figure, axes = pyplot.subplots(panels, 1, squeeze=False,
                                   figsize=(10, 3.2 * panels))
    colours = pyplot.rcParams['axes.prop_cycle'].by_key()['color']
    for ax, (name, data) in zip(axes[:, 0], groups):
        labels: typing.List[str] = []
        heights: typing.List[int] = []
        bar_colours: typing.List[str] = []
        rules = data['policies']['rules']
        legend = []
        for n, scope in enumerate(_scopes(data)):
            legend.append(patches.Patch(color=colours[n % len(colours)],
                                        label=scope))
            counts = collections.Counter(
                m['domains'].get(scope) for m in data['members']
                if m['host'] and m['domains'].get(scope))
            domains = ([d.name for d in topology.domains(scope)]
                       if scope != 'host' else sorted(counts))
            for domain in domains:
                labels.append(domain)
                heights.append(counts.get(domain, 0))
                bar_colours.append(colours[n % len(colours)])
            limit = rules.get(f'max_server_per_{scope}')
            if limit and domains:
                start = len(labels) - len(domains)
                ax.hlines(limit, start - 0.4, len(labels) - 0.6,
                          colors=colours[n % len(colours)],
                          linestyles='dashed')
        ax.bar(range(len(labels)), heights, color=bar_colours)
        ax.set_xticks(range(len(labels)), labels, rotation=60,
                      ha='right', fontsize=7)
        ax.set_ylabel('members')
        ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.legend(handles=legend, fontsize=7, loc='upper right')
        title = f'{name}: ' + ', '.join(data['policies']['policies'])
        if data['violations']:
            title += f'  ({len(data["violations"])} violation(s))'
        ax.set_title(title, fontsize=9)
    for ax, (name, plan) in zip(axes[len(groups):, 0], plans):
        _plan(ax, name, plan, topology, colours, patches, ticker)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


def _plan(ax, name, plan, topology, colours, patches, ticker) -> None:
    """A stack decision: its servers per domain of every deployer scope."""
    hosts = list(plan['assignments'].values())
    labels: typing.List[str] = []
    heights: typing.List[int] = []
    bar_colours: typing.List[str] = []
    legend = []
    scopes = [s for s in topology.scope_names if s != 'host'
              and topology.domains(s)] or ['host']
    for n, scope in enumerate(scopes):
        colour = colours[n % len(colours)]
        legend.append(patches.Patch(color=colour, label=scope))
        counts = collections.Counter(
            d for h in hosts for d in topology.domains_of(scope, h))
        domains = ([d.id for d in topology.domains(scope)]
                   if scope != 'host' else sorted(counts))
        for domain in domains:
            labels.append(topology.domain_name(domain))
            heights.append(counts.get(domain, 0))
            bar_colours.append(colour)
    ax.bar(range(len(labels)), heights, color=bar_colours)
    ax.set_xticks(range(len(labels)), labels, rotation=60, ha='right',
                  fontsize=7)
    ax.set_ylabel('decided servers')
    ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax.legend(handles=legend, fontsize=7, loc='upper right')
    title = (f'stack {name}: {plan["status"]}'
             f'{", confirmed" if plan.get("confirmed") else ""}, '
             f'{len(hosts)} servers')
    if plan['reason']:
        title += f' ({plan["reason"][:90]})'
    ax.set_title(title, fontsize=9)


def _scopes(data) -> typing.List[str]:
    scopes = sorted({s for m in data['members'] for s in m['domains']})
    # deployer scopes first; hosts last
    return [s for s in scopes if s != 'host'] + \
        (['host'] if 'host' in scopes else [])
