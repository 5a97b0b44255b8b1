"""Where each part of the suite runs.

tests/heat needs openstack-heat, whose pins clash with nova's: it runs in
its own virtualenv (.venv-heat, tools/heat-venv.sh). tools/run-tests.sh,
the README's test command, runs the main suite here and then tests/heat
there; a pytest without Heat leaves tests/heat to that second run.
"""

import importlib.util

collect_ignore = [] if importlib.util.find_spec('heat') else ['heat']
