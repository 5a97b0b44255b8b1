"""The install is lean: each part requires exactly what it imports.

Every import of our modules (at any depth, function-level ones included) is
followed from each part's entry modules; the third-party packages reached
must be the base requirements for the scheduler plugin, and must be covered
by the base requirements plus the part's extra for the others (nova itself
is the virtualenv the plugin lives in, never a requirement).
doc/source/install/index.rst lists the same table.
"""

import ast
import importlib.metadata as md
import pathlib
import pkgutil
import re
import sys

import pytest

import nova_scoped_policies

PACKAGE = pathlib.Path(nova_scoped_policies.__file__).parent
ROOT = 'nova_scoped_policies'
HOST = {'nova'}
"""Imported, never required: the plugin runs inside nova's virtualenv."""


def _file(name):
    path = PACKAGE.parent.joinpath(*name.split('.'))
    for candidate in (path / '__init__.py', path.with_suffix('.py')):
        if candidate.exists():
            return candidate
    return None


def _imports(name):
    path = _file(name)
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module
            if node.level:
                parts = package.split('.')
                parts = parts[:len(parts) - node.level + 1]
                module = '.'.join(parts + ([module] if module else []))
            yield module
            yield from (f'{module}.{alias.name}' for alias in node.names)


def third_party(roots):
    """Top-level names of the non-stdlib packages ``roots`` reach."""
    seen, found, todo = set(), set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for imported in _imports(name):
            top = imported.split('.')[0]
            if top == ROOT:
                parts = imported.split('.')
                while _file('.'.join(parts)) is None:
                    parts.pop()
                todo.append('.'.join(parts))
            elif top not in sys.stdlib_module_names:
                found.add(top)
    return found


def modules(package):
    path = [str(PACKAGE.parent.joinpath(*package.split('.')))]
    return [package] + [m.name for m in pkgutil.walk_packages(
        path, package + '.')]


def _norm(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def distributions(tops):
    index = md.packages_distributions()
    return {_norm(dist) for top in tops for dist in index[top]}


def requirements(extra=None):
    found = set()
    for line in md.requires('nova-scoped-policies'):
        marker = re.search(r'extra == "([^"]+)"', line)
        if (marker.group(1) if marker else None) == extra:
            found.add(_norm(re.match(r'[A-Za-z0-9_.-]+', line).group(0)))
    return found


SCHEDULER = modules(f'{ROOT}.scheduler') + [f'{ROOT}.cmd.status']
PARTS = {
    'service': modules(f'{ROOT}.api') + modules(f'{ROOT}.db') + [
        f'{ROOT}.cmd.manage'],
    'cli': modules(f'{ROOT}.osc'),
    'simulator': modules(f'{ROOT}.simulator') + modules(
        f'{ROOT}.placement') + [f'{ROOT}.cmd.main'],
    'joint': modules(f'{ROOT}.stacks'),
    'watcher': modules(f'{ROOT}.watcher'),
}
OPTIONAL = {'simulator': {'matplotlib', 'ortools', 'dask', 'distributed',
                          'openstack-placement'},
            'service': {'ortools', 'openstack-placement'}}
"""Imported only where a feature needs them: ``--plot`` and stacks answer
a clear error naming the extra to install when they are missing;
resilience sweeps run in the process without Dask unless workers are
asked for (then the error names the extra); ``nova-scoped-policies-manage
try`` runs openstack-placement, and says so when it is missing."""


def test_scheduler_plugin_requires_exactly_what_it_imports():
    imported = distributions(third_party(SCHEDULER) - HOST)
    assert requirements() - {'pbr'} == imported


@pytest.mark.parametrize('extra', sorted(PARTS))
def test_each_extra_covers_what_its_part_imports(extra):
    imported = distributions(third_party(PARTS[extra]) - HOST)
    optional = OPTIONAL.get(extra, set())
    missing = imported - requirements() - requirements(extra) - optional
    assert not missing, f'[extras] {extra} lacks {sorted(missing)}'
    unused = requirements(extra) - imported
    assert not unused, f'[extras] {extra} needs no {sorted(unused)}'


def test_sweep_is_its_own_extra():
    assert {'dask', 'distributed'} <= distributions(third_party(
        [f'{ROOT}.simulator.sweep']))
    assert requirements('sweep') == {'distributed'}


def test_plot_is_its_own_extra():
    assert 'matplotlib' in distributions(third_party(
        [f'{ROOT}.simulator.plot']))
    assert requirements('plot') == {'matplotlib'}
