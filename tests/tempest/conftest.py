"""Prints what the Tempest runs of ``test_tempest.py`` skipped, and why,
at the end of pytest's report (a skip is never silent)."""

import pytest

REPORT = pytest.StashKey[list]()


@pytest.fixture
def tempest_report(request):
    """A list to append the report's lines to."""
    return request.config.stash.setdefault(REPORT, [])


def pytest_terminal_summary(terminalreporter, config):
    lines = config.stash.get(REPORT, [])
    if lines:
        terminalreporter.section('Tempest (nova_scoped_policies)')
        for line in lines:
            terminalreporter.write_line(line)
