"""Run the gabbi YAML files of gabbits/ against the policy API, with the
store on SQLite, PostgreSQL and MariaDB.

Each YAML file is one pytest test running its gabbi suite (fixture
included) with unittest; a failure lists every failed step with gabbi's
report. gabbi's own pytest plugin is not used: it rewrites the collection
of the whole session and trips over other tests' ids.
"""

import glob
import os
import unittest

from gabbi import driver
import pytest

from tests import db_backends
from tests.functional.api import fixtures

TESTS_DIR = os.path.join(os.path.dirname(__file__), 'gabbits')
FILES = sorted(os.path.basename(p)[:-len('.yaml')]
               for p in glob.glob(os.path.join(TESTS_DIR, '*.yaml')))


def _suites():
    top = driver.build_tests(
        TESTS_DIR, unittest.TestLoader(), intercept=fixtures.setup_app,
        fixture_module=fixtures, test_loader_name=__name__)
    found = {}
    for suite in top:
        first = suite._tests[0].__class__.__name__
        found[next(f for f in FILES if first.startswith(f + '_'))] = suite
    return found


@pytest.mark.parametrize('backend', db_backends.BACKENDS)
@pytest.mark.parametrize('name', FILES)
def test_gabbits(name, backend, monkeypatch):
    monkeypatch.setattr(fixtures, 'BACKEND', backend)
    suite = _suites()[name]
    result = unittest.TestResult()
    suite.run(result)
    problems = [f'{test.id()}:\n{trace}'
                for test, trace in result.failures + result.errors]
    assert not problems, '\n\n'.join(problems)
    assert result.testsRun == len(suite._tests)
    assert not result.skipped
