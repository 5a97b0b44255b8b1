"""The Watcher plugins' tests, in a pytest of their own (see conftest)."""

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent.parent


def test_watcher_plugins_in_their_own_interpreter():
    done = subprocess.run(
        [sys.executable, '-m', 'pytest', str(HERE), '-q',
         '-p', 'no:cacheprovider'], cwd=ROOT, capture_output=True,
        text=True, timeout=600,
        env=dict(os.environ, NSP_WATCHER_PROCESS='1'))
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]
