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
