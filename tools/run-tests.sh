#!/usr/bin/env bash
# The project's one test command: creates .venv (nova's pins), .venv-heat
# (Heat's) and .venv-horizon (Horizon's and Keystone's) on a fresh machine,
# installs the pinned dependencies and runs the whole suite with pytest:
# unit and functional tests in the real nova-scheduler with a real
# Placement, then every benchmark at its smallest size with its correctness
# checks (python -m benchmarks all --smoke: same verdicts as nova, engines
# that agree...; no time target), then the Heat resources with the real
# Heat engine (tests/heat, in .venv-heat), then the dashboard: its view
# tests and its browser tests in Debian's chromium (tests/dashboard, in
# .venv-horizon; chromium and chromium-driver are installed with apt-get
# when missing and we are root),
# and the Tempest plugin: tempest run against a cloud of separate processes
# with Keystone (tests/tempest, from the main venv; Tempest in
# .venv-tempest, Keystone in .venv-horizon).
# Fails if any part fails.
#
#   tools/run-tests.sh                       everything
#   tools/run-tests.sh tests/unit -k parser  these tests only (main venv)
#   tools/run-tests.sh --heat [-k ...]       tests/heat only (Heat's venv)
#   tools/run-tests.sh --dashboard [-k ...]  the dashboard's tests only
#   tools/run-tests.sh --tempest [-k ...]    the Tempest runs only
set -euo pipefail
cd "$(dirname "$0")/.."

DASHBOARD_TESTS="nova_scoped_policies/dashboard/tests tests/dashboard"

# Debian's chromium and chromium-driver for the browser tests: installed
# when missing if we may (root, as CI runs); otherwise the tests fail
# saying what is missing.
browser_packages() {
    if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing chromium and chromium-driver (apt-get)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            chromium chromium-driver >/dev/null
    fi
}

dashboard() {
    source tools/horizon-venv.sh
    browser_packages
    # the browser tests start the policy API and Placement in the main venv
    NSP_VENV="${NSP_VENV:-$PWD/.venv}" "$NSP_HORIZON_VENV/bin/python" \
        -m pytest \
        --ds nova_scoped_policies.dashboard.tests.settings \
        $DASHBOARD_TESTS "$@"
}

# tempest run --regex nova_scoped_policies against the separate-process
# cloud (tests/tempest); its summary says what was skipped and why, and how
# long each run took
tempest() {
    source tools/tempest-venv.sh
    source tools/horizon-venv.sh
    NSP_TEMPEST_VENV="$NSP_TEMPEST_VENV" NSP_KEYSTONE_VENV="$NSP_HORIZON_VENV" \
        "$NSP_VENV/bin/python" -m pytest tests/tempest "$@"
}

if [ "${1:-}" = "--heat" ]; then
    shift
    source tools/heat-venv.sh
    exec "$NSP_HEAT_VENV/bin/python" -m pytest tests/heat "$@"
fi
source tools/venv.sh
if [ "${1:-}" = "--dashboard" ]; then
    shift
    dashboard "$@"
    exit $?
fi
if [ "${1:-}" = "--tempest" ]; then
    shift
    tempest "$@"
    exit $?
fi
if [ $# -gt 0 ]; then
    exec "$NSP_VENV/bin/python" -m pytest "$@"
fi
status=0
# Horizon's virtualenv is made while the main suite runs (pip waits on the
# network, not the CPU); dashboard() finishes it if that failed
mkdir -p .test-artifacts
(source tools/horizon-venv.sh) > .test-artifacts/horizon-venv.log 2>&1 &
horizon_venv=$!
(source tools/tempest-venv.sh) > .test-artifacts/tempest-venv.log 2>&1 &
tempest_venv=$!
"$NSP_VENV/bin/python" -m pytest --durations=20 --ignore=tests/tempest \
    tests || status=$?
# every benchmark at its smallest size, with its correctness checks and no
# time target: a benchmark that crashes or answers wrong fails CI
"$NSP_VENV/bin/python" -m benchmarks all --smoke || status=$?
source tools/heat-venv.sh
"$NSP_HEAT_VENV/bin/python" -m pytest tests/heat || status=$?
wait $horizon_venv || cat .test-artifacts/horizon-venv.log >&2
wait $tempest_venv || cat .test-artifacts/tempest-venv.log >&2
tempest || status=$?
dashboard || status=$?
exit $status
