"""Every example says what it shows, and shows it.

Each ``examples/*.yaml`` carries one ``# expect:`` comment line (the
format is in doc/source/user/simulator.rst, "Examples"); this runs every
example as a user does (``simulate X.yaml --format json``) and checks the
report against it.
"""

import collections
import glob
import json
import os
import re

import pytest

from nova_scoped_policies.cmd import main as cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, 'examples', '*.yaml')))
EXPECT = re.compile(r'^# expect: (.*)$', re.MULTILINE)
REQUIRED = {'placed', 'failed'}


def expectations(path):
    """The ``# expect:`` line of an example, as ``{key: int}``.

    :param path: the example file.
    """
    with open(path) as f:
        found = EXPECT.findall(f.read())
    assert len(found) == 1, f'{path}: needs exactly one "# expect:" line'
    pairs = dict(item.split('=', 1) for item in found[0].split())
    assert REQUIRED <= set(pairs), f'{path}: expect needs placed= failed='
    return {key: int(value) for key, value in pairs.items()}


def measured(report, keys):
    """What the report shows, for the keys an example expects.

    :param report: the JSON report.
    :param keys: the expected keys.
    """
    found = {'placed': report['stats']['placed'],
             'failed': len(report['failures']),
             'violations': sum(len(g['violations'])
                               for g in report['audit'].values()),
             'hosts': len({p['host'] for p in report['placements']})}
    # resilience sweeps: the cases and those that survive, of all sweeps
    if report.get('resilience'):
        found['cases'] = sum(s['cases'] for s in report['resilience'])
        found['survived'] = sum(s['survived']
                                for s in report['resilience'])
    for key in keys:
        if key.startswith('domains:'):
            scope = key.split(':', 1)[1]
            found[key] = len(collections.Counter(
                p['domains'][scope] for p in report['placements']
                if p['domains'].get(scope)))
    unknown = set(keys) - set(found)
    assert not unknown, f'unknown expect keys {sorted(unknown)}'
    return {key: found[key] for key in keys}


def test_there_are_examples():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize('path', EXAMPLES,
                         ids=[os.path.basename(p) for p in EXAMPLES])
def test_example_shows_what_it_says(path, capsys):
    expected = expectations(path)
    assert cli.main(['simulate', path, '--format', 'json']) == 0
    report = json.loads(capsys.readouterr().out)
    assert measured(report, expected) == expected


def test_a_wrong_expectation_is_caught():
    report = {'stats': {'placed': 2}, 'failures': [{'server': 'a-3'}],
              'audit': {'g': {'violations': ['x']}},
              'placements': [{'host': 'h1', 'domains': {'rack': 'r1'}},
                             {'host': 'h2', 'domains': {'rack': 'r1'}}]}
    keys = ['placed', 'failed', 'violations', 'hosts', 'domains:rack']
    assert measured(report, keys) == {
        'placed': 2, 'failed': 1, 'violations': 1, 'hosts': 2,
        'domains:rack': 1}
    with pytest.raises(AssertionError, match='unknown expect keys'):
        measured(report, ['placed', 'spread'])
