#!/usr/bin/env bash
# The project's one test command: creates .venv on a fresh machine, installs
# the pinned dependencies and runs the whole suite (unit and functional tests
# in the real nova-scheduler with a real Placement) with pytest.
# Extra arguments go to pytest, e.g. tools/run-tests.sh tests/unit -k parser
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh
exec "$NSP_VENV/bin/python" -m pytest "${@:-tests}"
