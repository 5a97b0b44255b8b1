"""pep8 and pyflakes over the code, the tests and the benchmarks."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_flake8():
    done = subprocess.run(
        [sys.executable, '-m', 'flake8', 'nova_scoped_policies', 'tests',
         'benchmarks'], cwd=ROOT, capture_output=True, text=True,
        timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


PACKAGE = os.path.join(ROOT, 'nova_scoped_policies')
NOVA_INTERNALS = ('_sentinel', '_context', '_get_attrname', '_changed_fields',
                  '_locked_consume_from_request', '_limit',
                  'ALL_REQUEST_FILTERS')
"""nova's private names (and its request-filter list), which only the nova
seam may touch."""
LAYERS = {
    'policy': ('engine', 'db', 'scheduler', 'placement', 'api', 'stacks',
               'topology', 'nova_seam'),
    'topology': ('engine', 'db', 'scheduler', 'placement', 'api', 'stacks',
                 'nova_seam'),
    'conf': ('engine', 'db', 'scheduler', 'placement', 'api', 'stacks',
             'nova_seam'),
}
"""Package -> the packages above it that it must not import."""


def _modules(package):
    for folder, _, files in os.walk(os.path.join(PACKAGE, package)):
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(folder, name)
                with open(path) as source:
                    yield os.path.relpath(path, ROOT), source.read()


def test_nova_internals_only_in_the_seam():
    import ast
    found = []
    for package in sorted(os.listdir(PACKAGE)):
        if package == 'nova_seam' or \
                not os.path.isdir(os.path.join(PACKAGE, package)):
            continue
        for path, text in _modules(package):
            for node in ast.walk(ast.parse(text)):
                name = (node.attr if isinstance(node, ast.Attribute) else
                        node.value if isinstance(node, ast.Constant) and
                        isinstance(node.value, str) else None)
                if name in NOVA_INTERNALS:
                    found.append(f'{path}:{node.lineno}: {name}')
    assert not found, found


def test_no_import_goes_up_a_layer():
    import ast
    found = []
    for package, above in LAYERS.items():
        for path, text in _modules(package):
            for node in ast.walk(ast.parse(text)):
                names = ([a.name for a in node.names]
                         if isinstance(node, ast.Import) else
                         [node.module or ''] if isinstance(
                             node, ast.ImportFrom) else [])
                for name in names:
                    parts = name.split('.')
                    if parts[0] == 'nova_scoped_policies' and \
                            len(parts) > 1 and parts[1] in above:
                        found.append(f'{path}:{node.lineno}: {name}')
    assert not found, found


SKIPS = ('importorskip', 'pytest.skip', 'mark.skip', 'unittest.skip',
         'skipTest', 'skipIf', 'skipUnless', 'xfail')
"""What would skip a test: a test whose requirement is missing (a declared
requirement, a service) fails saying so instead."""


def test_no_test_skips():
    found = []
    for top in ('tests', os.path.join('nova_scoped_policies', 'dashboard',
                                      'tests')):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                path = os.path.join(folder, name)
                if not name.endswith('.py') or path == __file__:
                    continue
                with open(path, encoding='utf-8') as source:
                    for number, line in enumerate(source, 1):
                        found += [f'{os.path.relpath(path, ROOT)}:{number}: '
                                  f'{word}' for word in SKIPS
                                  if word in line]
    assert not found, found


def test_a_service_that_fails_is_one_error_mapped_once():
    """A service that does not answer (Placement, Nova, a configuration
    file) is :class:`nova_scoped_policies.errors.Unavailable`, wherever it
    is raised; the API's ``FAULTS`` (api/util.py) alone makes it a 503."""
    found = [f'{path}: {line.strip()}'
             for package in ('api', 'stacks', 'repair', 'watcher', 'db')
             if os.path.isdir(os.path.join(PACKAGE, package))
             for path, text in _modules(package)
             for line in text.splitlines()
             if 'HTTPServiceUnavailable' in line and
             not path.endswith(os.path.join('api', 'util.py'))]
    assert not found, found
