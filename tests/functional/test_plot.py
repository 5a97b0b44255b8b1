"""``simulate --plot``: readable at hundreds of domains (a heatmap above
plot.BAR_LIMIT domains, bars below), with the limits in the legends, the
failed servers of each group counted, and a bounded figure."""

import collections
import os
import struct

# a declared test requirement (test-requirements.txt): missing, the
# module fails to import and its tests fail, never skip
import matplotlib  # noqa: F401

from nova_scoped_policies.cmd import main as cli
from nova_scoped_policies.placement import fake
from nova_scoped_policies.simulator import fast
from nova_scoped_policies.simulator import plot
from nova_scoped_policies.simulator import scenario as sc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
FLAVOR = {'resources': {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}}
TOO_BIG = {'resources': {'VCPU': 999, 'MEMORY_MB': 4096, 'DISK_GB': 20}}


def racks(count, servers, extra_scopes=None):
    """Two hosts per rack, ``servers`` members of group db (at most 2 per
    rack; then at most 1, so the full racks are over the limit), and a
    boot of 3 that fits nowhere (3 failed)."""
    scopes = dict({'rack': count}, **(extra_scopes or {}))
    return {
        'scopes': {s: {} for s in scopes},
        'generate': {'hosts': {'count': 2 * count, 'prefix': 'n',
                               'resources': {'VCPU': 16,
                                             'MEMORY_MB': 65536,
                                             'DISK_GB': 1000}},
                     'scopes': scopes},
        'groups': [{'name': 'db', 'project': 'tenant-a',
                    'policies': ['anti-affinity:rack'],
                    'rules': {'max_server_per_rack': 2}}],
        'requests': [
            {'boot': {'name': 'db', 'group': 'db', 'count': servers,
                      'flavor': FLAVOR}},
            {'update_group': {'group': 'db',
                              'policies': ['anti-affinity:rack'],
                              'rules': {'max_server_per_rack': 1}}},
            {'boot': {'name': 'huge', 'group': 'db', 'count': 3,
                      'flavor': TOO_BIG}}]}


def simulate(data):
    scenario = sc.parse(data) if isinstance(data, dict) else sc.load(data)
    result = fast.FastSimulation(scenario, fake.FakePlacement()).run()
    return scenario, result


def draw(data, tmp_path):
    scenario, result = simulate(data)
    png = tmp_path / 'plot.png'
    drawing = plot.plot(result, str(png), scenario.topology())
    return result, drawing, png


def legend(panel):
    return [t.get_text() for t in panel.axes.get_legend().get_texts()]


def png_size(png):
    data = png.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    return struct.unpack('>II', data[16:24])


def per_rack(result):
    return collections.Counter(m['domains']['rack']
                               for m in result['audit']['db']['members']
                               if m['host'])


def test_three_hundred_racks_are_a_heatmap(tmp_path):
    result, drawing, png = draw(racks(300, 50), tmp_path)
    (panel,) = drawing.panels
    assert (panel.owner, panel.name, panel.scope) == ('group', 'db', 'rack')
    assert panel.kind == 'heatmap' and panel.domains == 300
    assert not drawing.omitted
    # the grid holds every rack, rows labelled first ... last
    (image,) = panel.axes.get_images()
    rows, columns = image.get_array().shape
    assert rows * columns >= 300 and columns <= plot.MAX_COLUMNS
    assert image.get_array().count() == 300
    labels = [t.get_text() for t in panel.axes.get_yticklabels()]
    assert labels[0] == f'rack-1 … rack-{columns}'
    assert len(labels) <= plot.MAX_ROW_LABELS
    # the limit, the racks over it and the failed servers
    full = sum(1 for n in per_rack(result).values() if n == 2)
    alone = sum(1 for n in per_rack(result).values() if n == 1)
    assert full >= 1 and panel.limit == 1 and panel.over == full
    assert legend(panel) == [
        f'at the limit 1 (max_server_per_rack): {alone}',
        f'over the limit: {full}', '3 failed (no host)']
    assert panel.failed == 3 and '3 FAILED' in panel.title
    assert f'{full} violation(s)' in panel.title
    assert len(result['failures']) == 3
    # a colour bar for the counts, and a readable, bounded PNG
    (colour_bar,) = panel.axes.child_axes
    assert colour_bar.get_ylabel() == 'members'
    width, height = png_size(png)
    assert width == plot.WIDTH * 100 and 300 < height <= 1000


def test_a_small_scope_keeps_labelled_bars(tmp_path):
    result, drawing, png = draw(racks(12, 14), tmp_path)
    (panel,) = drawing.panels
    assert panel.kind == 'bars' and panel.domains == 12
    ticks = [t.get_text() for t in panel.axes.get_xticklabels()]
    assert ticks == [f'rack-{n}' for n in range(1, 13)] + ['failed']
    assert legend(panel) == [
        'members per rack', 'limit 1 (max_server_per_rack)',
        f'over the limit ({panel.over})', '3 failed (no host)']
    assert panel.over == sum(1 for n in per_rack(result).values() if n > 1)
    # the dashed limit line and the hatched bar of the failed
    (line,) = panel.axes.get_lines()
    assert line.get_linestyle() == '--' and set(line.get_ydata()) == {1}
    hatched = [p for p in panel.axes.patches if p.get_hatch()]
    assert [p.get_height() for p in hatched] == [3]
    assert '3 failed' in [t.get_text() for t in panel.axes.texts]
    assert png_size(png)[1] <= 400


def test_the_threshold_is_per_scope(tmp_path):
    data = racks(300, 50, {'zone': 3})
    data['groups'][0]['policies'] = ['anti-affinity:rack',
                                     'soft-anti-affinity:zone',
                                     'anti-affinity:host']
    data['requests'][1]['update_group']['policies'] = \
        data['groups'][0]['policies']
    _, drawing, _ = draw(data, tmp_path)
    kinds = {p.scope: (p.kind, p.domains, p.limit) for p in drawing.panels}
    assert kinds == {'rack': ('heatmap', 300, 1), 'zone': ('bars', 3, None),
                     'host': ('heatmap', 50, 1)}
    # each panel of the group counts its failed servers
    assert {p.failed for p in drawing.panels} == {3}
    assert all('3 FAILED' in p.title for p in drawing.panels)
    assert '3 failed (no host)' in legend(drawing.panels[1])


def test_the_figure_stays_bounded(tmp_path):
    data = racks(60, 4)
    data['groups'] += [{'name': f'g{n}', 'project': 'tenant-a',
                        'policies': ['anti-affinity:rack']}
                       for n in range(1, 31)]
    data['requests'] += [{'boot': {'name': f'g{n}', 'group': f'g{n}',
                                   'count': 2, 'flavor': FLAVOR}}
                         for n in range(1, 31)]
    _, drawing, png = draw(data, tmp_path)
    assert len(drawing.panels) + len(drawing.omitted) == 31
    assert len(drawing.panels) <= plot.MAX_PANELS and drawing.omitted
    # natural order: db, g1, g2, ..., g10
    assert [p.name for p in drawing.panels[:4]] == ['db', 'g1', 'g2', 'g3']
    assert f'{len(drawing.omitted)} more panel(s) not drawn' in \
        drawing.figure.get_supxlabel()
    assert png_size(png)[1] <= plot.MAX_HEIGHT * 100


def test_stack_panels(tmp_path):
    _, drawing, _ = draw(os.path.join(ROOT, 'examples',
                                      'stack-joint-vs-greedy.yaml'),
                         tmp_path)
    kinds = [(p.owner, p.name, p.scope, p.kind, p.failed)
             for p in drawing.panels]
    assert kinds == [('group', 'big', 'rack', 'bars', 6),
                     ('group', 'big', 'host', 'bars', 6),
                     ('group', 'small', None, 'empty', 0),
                     ('stack', 'app', 'rack', 'bars', 0)]
    assert drawing.panels[-1].title.startswith(
        'stack app: reserved, confirmed, 10 servers decided')


def test_cli_plots_hundreds_of_racks(tmp_path, capsys):
    import yaml
    path = tmp_path / 'racks.yaml'
    path.write_text(yaml.safe_dump(racks(300, 50)))
    png = tmp_path / 'racks.png'
    assert cli.main(['simulate', str(path), '--plot', str(png)]) == 0
    assert '50 servers placed, 3 failed boots' in capsys.readouterr().out
    assert png_size(png)[0] == plot.WIDTH * 100
