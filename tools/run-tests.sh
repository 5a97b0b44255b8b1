#!/usr/bin/env bash
# The project's one test command: creates .venv (nova's pins) and
# .venv-heat (Heat's) on a fresh machine, installs the pinned dependencies
# and runs the whole suite with pytest: unit and functional tests in the
# real nova-scheduler with a real Placement, then the Heat resources with
# the real Heat engine (tests/heat, in .venv-heat). Fails if either fails.
#
#   tools/run-tests.sh                      everything
#   tools/run-tests.sh tests/unit -k parser  these tests only (main venv)
#   tools/run-tests.sh --heat [-k ...]       tests/heat only (Heat's venv)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--heat" ]; then
    shift
    source tools/heat-venv.sh
    exec "$NSP_HEAT_VENV/bin/python" -m pytest tests/heat "$@"
fi
source tools/venv.sh
if [ $# -gt 0 ]; then
    exec "$NSP_VENV/bin/python" -m pytest "$@"
fi
status=0
"$NSP_VENV/bin/python" -m pytest tests || status=$?
source tools/heat-venv.sh
"$NSP_HEAT_VENV/bin/python" -m pytest tests/heat || status=$?
exit $status
