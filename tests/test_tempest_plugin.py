"""The Tempest plugin stands alone: it imports only Tempest's stable
interfaces for plugins, the libraries Tempest itself brings, the standard
library and itself, never the rest of nova_scoped_policies (it installs
into Tempest's virtualenv with ``--no-deps``: our requirements never meet
Tempest's pins). Read from the source, without Tempest installed; the run
against a cloud is ``tests/tempest``.
"""

import ast
import configparser
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGIN = os.path.join(ROOT, 'nova_scoped_policies', 'tempest')
OWN = 'nova_scoped_policies.tempest'
STABLE = ('tempest.lib', 'tempest.config', 'tempest.test_discover.plugins',
          'tempest.common.credentials_factory', 'tempest.common.compute',
          'tempest.common.identity', 'tempest.common.image',
          'tempest.common.object_storage', 'tempest.clients', 'tempest.test',
          'tempest.scenario.manager')
"""Tempest's "Stable Tempest APIs plugins may use" (its plugin guide)."""
TEMPEST_BRINGS = ('oslo_config', 'oslo_log')
"""Libraries tempest requires (its option types, its logger)."""


def _imports(path):
    """(line, module) of every import of the file, ``from`` imports as
    ``module.name``."""
    tree = ast.parse(open(path).read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f'{path}:{node.lineno}: relative import'
            for alias in node.names:
                yield node.lineno, f'{node.module}.{alias.name}'


def _allowed(name):
    top = name.split('.')[0]
    return (top in sys.stdlib_module_names or top in TEMPEST_BRINGS or
            any(name == p or name.startswith(p + '.')
                for p in STABLE + (OWN,)))


def _modules():
    for folder, _, files in os.walk(PLUGIN):
        for name in sorted(files):
            if name.endswith('.py'):
                yield os.path.join(folder, name)


def test_the_plugin_imports_only_tempest_stable_interfaces_and_itself():
    found = [f'{os.path.relpath(path, ROOT)}:{line}: {name}'
             for path in _modules() for line, name in _imports(path)
             if not _allowed(name)]
    assert not found, found


def test_the_check_sees_what_is_not_allowed():
    for name in ('nova_scoped_policies.api.microversion.HEADER',
                 'tempest.common.waiters.wait_for_server_status',
                 'tempest.api.compute.base.BaseV2ComputeTest', 'requests'):
        assert not _allowed(name), name
    for name in ('tempest.lib.exceptions.NotFound', 'tempest.test',
                 'nova_scoped_policies.tempest.tests.base', 'json'):
        assert _allowed(name), name


def test_tempest_finds_the_plugin_through_its_entry_point():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, 'setup.cfg'))
    points = dict(line.split(' = ') for line in cfg.get(
        'entry_points', 'tempest.test_plugins').strip().splitlines())
    assert points == {'scoped_policies': f'{OWN}.plugin:'
                                         'ScopedPoliciesTempestPlugin'}
    module = os.path.join(PLUGIN, 'plugin.py')
    classes = [n.name for n in ast.parse(open(module).read()).body
               if isinstance(n, ast.ClassDef)]
    assert 'ScopedPoliciesTempestPlugin' in classes


def test_every_client_tempest_registers_exists():
    names = {n.name for path in _modules() if '/services/' in path
             for n in ast.parse(open(path).read()).body
             if isinstance(n, ast.ClassDef)}
    plugin = ast.parse(open(os.path.join(PLUGIN, 'plugin.py')).read())
    (listed,) = [ast.literal_eval(value) for node in ast.walk(plugin)
                 if isinstance(node, ast.Dict)
                 for key, value in zip(node.keys, node.values)
                 if getattr(key, 'value', None) == 'client_names']
    assert set(listed) <= names, set(listed) - names


def test_every_test_has_its_own_idempotent_id():
    seen = {}
    for path in _modules():
        tree = ast.parse(open(path).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and \
                    node.name.startswith('test_'):
                ids = [d.args[0].value for d in node.decorator_list
                       if isinstance(d, ast.Call) and getattr(
                           d.func, 'attr', '') == 'idempotent_id']
                assert len(ids) == 1, f'{path}: {node.name}'
                assert ids[0] not in seen, (node.name, seen.get(ids[0]))
                seen[ids[0]] = node.name
    assert len(seen) > 40
