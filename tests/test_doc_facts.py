"""What the docs and our tools state holds: the database revision
service.rst shows is the alembic head; every file the docs cite is in the
repository; the sample config has the notifications sections; no console
script of ours prints eventlet's deprecation warning."""

import glob
import os
import re
import subprocess
import sys

import pytest

from benchmarks import figures
from nova_scoped_policies.db import migration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
DOCS = os.path.join(ROOT, 'doc', 'source')
# a relative file name with one of these endings is a citation
_PATH = re.compile(
    r'(?<![\w/.:@<-])((?:\.\./)*[\w.*][\w.*<>{}-]*(?:/[\w.*<>{}-]+)*'
    r'\.(?:py|md|txt|yaml|yml|rst|sh|conf|cfg|json|ini|sample))\b')
# other projects' files, cited as theirs
OTHER_PROJECTS = ('nova/', 'placement/', 'heat/', 'watcher/', 'horizon/')
# a bare name with one of these endings names a document: it must be ours
DOCUMENTS = ('.md', '.txt', '.rst')
# written by the docs build (conf.py: oslo_config.sphinxconfiggen)
GENERATED = ('_static/nova-scoped-policies.conf.sample',
             '_static/nova-scoped-policies.policy.yaml.sample')


def _repository_files():
    listed = subprocess.run(['git', 'ls-files', '--cached', '--others',
                             '--exclude-standard'], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return set(listed.stdout.split())


FILES = _repository_files()


def _exists(cited: str, page: str) -> bool:
    """Whether ``cited`` (on ``page``) is a file of the repository: from
    the root, from the page's folder, or the end of a path (``*`` and
    ``<placeholder>`` match anything)."""
    here = os.path.relpath(os.path.dirname(page), ROOT)
    pattern = re.sub(r'<[^>]+>|\\\*', '.+', re.escape(cited))
    # sphinx directives name files from doc/source
    for candidate in (cited, os.path.normpath(os.path.join(here, cited)),
                      os.path.normpath(os.path.join('doc/source', cited))):
        if any(re.fullmatch(re.sub(r'<[^>]+>|\\\*', '.+',
                                   re.escape(candidate)), f)
               for f in FILES):
            return True
    return any(re.fullmatch(r'(?:.*/)?' + pattern, f) for f in FILES)


def missing(page: str):
    """The files ``page`` cites that are not in the repository."""
    with open(page, encoding='utf-8') as handle:
        text = handle.read()
    found = []
    for match in _PATH.finditer(text):
        cited = match.group(1)
        if 'shared/' in cited:
            found.append(cited)
            continue
        if cited.startswith(OTHER_PROJECTS) or cited.endswith(GENERATED):
            continue
        if '/' not in cited and not cited.endswith(DOCUMENTS):
            continue  # nova.conf, clouds.yaml: a kind of file, not ours
        if not _exists(cited, page):
            found.append(cited)
    return found


PAGES = sorted(glob.glob(os.path.join(DOCS, '**', '*.rst'),
                         recursive=True))


@pytest.mark.parametrize('page', PAGES,
                         ids=lambda p: os.path.relpath(p, DOCS))
def test_docs_cite_only_files_of_the_repository(page):
    assert missing(page) == []


def test_the_check_sees_a_missing_file(tmp_path):
    page = tmp_path / 'page.rst'
    page.write_text('See ``shared/contracts/stack-document.md`` and '
                    'heat-policy-extension.txt, tools/venv.sh, nova.conf, '
                    'nova/scheduler/manager.py and tools/nosuch.sh.\n')
    assert missing(str(page)) == ['shared/contracts/stack-document.md',
                                  'heat-policy-extension.txt',
                                  'tools/nosuch.sh']


def test_service_rst_shows_the_head_revision():
    with open(os.path.join(DOCS, 'admin', 'service.rst')) as handle:
        shown = re.findall(r'policy store at revision (\w+)',
                           handle.read())
    assert shown == [migration.head()]


def test_sample_config_has_the_notification_sections(tmp_path):
    sample = tmp_path / 'sample.conf'
    done = subprocess.run(
        [os.path.join(ROOT, 'tools', 'genconfig.sh'), '--output-file',
         str(sample)], cwd=ROOT, capture_output=True, text=True,
        timeout=600, env=dict(os.environ, NSP_VENV=os.path.dirname(BIN)))
    assert done.returncode == 0, done.stderr
    assert 'Warning' not in done.stderr, done.stderr
    text = sample.read_text()
    for section in ('[oslo_messaging_notifications]',
                    '[scoped_policies_notifications]'):
        assert section in text
    assert '#driver =' in text and '#queue_size = 10000' in text


@pytest.mark.parametrize('argv', [
    ['nova-scoped-policies-manage', 'db', 'version', '--config-file',
     '{conf}'],
    ['nova-scoped-policies-status', 'upgrade', 'check', '--config-file',
     '{conf}'],
    ['nova-scoped-policies-api', '--help'],
    ['nova-scoped-policies', 'db', 'sync', '--config-file', '{conf}'],
], ids=lambda argv: argv[0])
def test_no_eventlet_warning_from_our_console_scripts(argv, tmp_path):
    conf = tmp_path / 'nsp.conf'
    conf.write_text(f'[policy_store]\nconnection = sqlite:///{tmp_path}/'
                    's.db\n')
    done = subprocess.run(
        [os.path.join(BIN, argv[0])] + [a.format(conf=conf)
                                        for a in argv[1:]],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert 'Eventlet' not in done.stderr, done.stderr
    assert 'Warning:' not in done.stderr, done.stderr


# -- the benchmarks' figures --------------------------------------------------

FIGURE_PAGES = (os.path.join(DOCS, 'contributor', 'performance.rst'),
                os.path.join(ROOT, 'README.md'))
"""The pages that cite the benchmarks' figures."""
_KEY = re.compile(r'`{1,2}(%s)`{1,2}' % figures.KEY)


def named_keys(text: str):
    """The figures' keys ``text`` names (in backquotes)."""
    return _KEY.findall(text)


def _rst_tables(text: str):
    """Each table of a reStructuredText page: (its header's cells, its
    rows' cells)."""
    from docutils import core
    from docutils import nodes
    tree = core.publish_doctree(text, settings_overrides={
        'report_level': 5, 'halt_level': 5})
    for table in tree.findall(nodes.table):
        head = [[e.astext() for e in row.findall(nodes.entry)]
                for part in table.findall(nodes.thead)
                for row in part.findall(nodes.row)]
        body = [[e.astext() for e in row.findall(nodes.entry)]
                for part in table.findall(nodes.tbody)
                for row in part.findall(nodes.row)]
        yield (head[-1] if head else []), body


def _md_tables(text: str):
    """Each table of a Markdown page, as :func:`_rst_tables`."""
    rows = []
    for line in text.splitlines() + ['']:
        if line.startswith('|'):
            rows.append([c.strip() for c in line.strip().strip('|')
                         .split('|')])
            continue
        if rows:
            body = [r for r in rows[1:]
                    if not all(set(c) <= set('-: ') for c in r)]
            yield rows[0], body
        rows = []


def unkeyed(path: str, text: str):
    """The rows of ``path``'s tables that hold a figure (a digit outside
    the ``key`` column) and name no figure's key in it, and the tables
    with no ``key`` column."""
    found = []
    tables = _md_tables if path.endswith('.md') else _rst_tables
    for head, body in tables(text):
        if 'key' not in head:
            found.append(f'a table with no key column: {head}')
            continue
        column = head.index('key')
        for row in body:
            others = row[:column] + row[column + 1:]
            if any(ch.isdigit() for cell in others for ch in cell) and \
                    not named_keys('``' + '`` ``'.join(
                        row[column].replace(',', ' ').split()) + '``'):
                found.append(' | '.join(row))
    return found


def undeclared(keys):
    """The keys that no suite's full (or ``--big``) run prints
    (benchmarks/figures.py)."""
    return sorted(k for k in set(keys)
                  if k not in figures.FIGURES
                  or not figures.FIGURES[k].runs & figures.PUBLISHED)


@pytest.mark.parametrize('page', FIGURE_PAGES,
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_every_figure_in_the_tables_names_its_key(page):
    with open(page, encoding='utf-8') as handle:
        text = handle.read()
    assert unkeyed(page, text) == []


@pytest.mark.parametrize('page', PAGES + [FIGURE_PAGES[-1]],
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_every_key_the_docs_name_is_printed_by_its_suite(page):
    with open(page, encoding='utf-8') as handle:
        keys = named_keys(handle.read())
    assert bool(keys) or page not in FIGURE_PAGES
    assert undeclared(keys) == []


def test_each_suite_prints_only_its_declared_figures():
    """Each suite hands its name to ``Targets``, which refuses a key it
    does not declare and fails a run that leaves out one it does."""
    for suite in figures.SUITES:
        with open(os.path.join(ROOT, 'benchmarks', f'bench_{suite}.py'),
                  encoding='utf-8') as handle:
            assert f"Targets(suite='{suite}'" in handle.read(), suite
        assert figures.of(suite), suite
        assert all(re.fullmatch(figures.KEY, k) for k in figures.of(suite))


def test_the_checks_see_a_figure_with_no_key(tmp_path):
    page = ('=====  =====  ===\n'
            'what   value  key\n'
            '=====  =====  ===\n'
            'P3     2.98   ``sim_cloud_5k_whole_s``\n'
            'P1     80.5\n'
            '=====  =====  ===\n\n'
            '=====  =====\n'
            'what   value\n'
            '=====  =====\n'
            'P2     0.32\n'
            '=====  =====\n')
    assert unkeyed('page.rst', page) == [
        'P1 | 80.5 | ', "a table with no key column: ['what', 'value']"]
    readme = ('| what | value | key |\n|---|---|---|\n'
              '| P3 | 2.98 | `sim_cloud_5k_whole_s` |\n| P1 | 80.5 | |\n')
    assert unkeyed('README.md', readme) == ['P1 | 80.5 | ']
    assert undeclared(['sim_cloud_5k_whole_s', 'sim_cloud_1k_whole_s',
                       'sim_nosuch_s']) == ['sim_cloud_1k_whole_s',
                                            'sim_nosuch_s']
