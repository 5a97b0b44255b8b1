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
