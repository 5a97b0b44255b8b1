"""The Watcher plugins' tests run in an interpreter of their own.

Watcher and nova register options of the same names on oslo.config's
global ``CONF`` (``[DEFAULT] host``, ``[api] max_limit``, ...), so one
interpreter cannot import both: the suite's other tests import nova.
:mod:`.test_own_process` starts ``pytest tests/unit/watcher`` with
``NSP_WATCHER_PROCESS=1``; only there are the modules that import Watcher
collected.
"""

import os

INSIDE = os.environ.get('NSP_WATCHER_PROCESS') == '1'

collect_ignore = (['test_own_process.py'] if INSIDE else
                  ['fakes.py', 'test_engine.py', 'test_world.py'])
"""Inside, the test that starts this process is not collected (rather
than skipped: no test of ours skips, ``tests/test_style.py``)."""
