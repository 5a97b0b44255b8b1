#!/usr/bin/env bash
# The project's one test command: creates .venv (nova's pins), .venv-heat
# (Heat's), .venv-horizon (Horizon's and Keystone's) and .venv-tempest on a
# fresh machine, installs the pinned dependencies and runs the whole suite
# with pytest, on both cores:
#   1. the unit and functional tests (the real nova-scheduler with a real
#      Placement) in two processes at once, two halves of about equal time
#      (pytest-split, by tests/durations.json); behind the first, the Heat
#      resources with the real Heat engine (tests/heat, in .venv-heat);
#      behind the second, every benchmark at its smallest size with its
#      correctness checks (python -m benchmarks all --smoke: same verdicts
#      as nova, engines that agree...; no time target);
#   2. then, at once: the Tempest plugin, tempest run against a cloud of
#      separate processes with Keystone (tests/tempest, from the main venv;
#      Tempest in .venv-tempest, Keystone in .venv-horizon), and the
#      dashboard: its view tests and its browser tests in Debian's chromium
#      (tests/dashboard, in .venv-horizon; chromium and chromium-driver are
#      installed with apt-get when missing and we are root).
# Each part's output is kept in .test-artifacts/PART.log and shown when it
# ends. The run ends with the 20 slowest tests of every part and the whole
# time (tools/slowest.py). Fails if any part fails.
#
#   tools/run-tests.sh                       everything
#   tools/run-tests.sh --quick               the unit tests (two minutes)
#   tools/run-tests.sh tests/unit -k parser  these tests only (main venv)
#   tools/run-tests.sh --heat [-k ...]       tests/heat only (Heat's venv)
#   tools/run-tests.sh --dashboard [-k ...]  the dashboard's tests only
#   tools/run-tests.sh --tempest [-k ...]    the Tempest runs only
#   tools/run-tests.sh --durations           the main suite, one process,
#                                            writing tests/durations.json
#
# Why not pytest-xdist: nova's functional tests monkey-patch eventlet when
# imported (nova's nova.tests.functional package), which deadlocks the
# threads of xdist's workers; two pytest processes split by pytest-split
# share nothing but the machine.
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

# the main suite (all but tests/tempest, tests/heat and the dashboard's) in
# SPLITS processes at once, each a pytest-split group of about equal time
SPLITS=2
main_group() {
    "$NSP_VENV/bin/python" -m pytest \
        --splits $SPLITS --group "$1" \
        --splitting-algorithm duration_based_chunks \
        --durations-path tests/durations.json \
        --junitxml=".test-artifacts/junit/main-$1.xml" \
        --ignore=tests/tempest tests
}

# the first group, then the Heat resources in Heat's virtualenv
first_lane() {
    local status=0
    main_group 1 || status=$?
    source tools/heat-venv.sh
    "$NSP_HEAT_VENV/bin/python" -m pytest tests/heat \
        --junitxml=.test-artifacts/junit/heat.xml || status=$?
    return $status
}

# the second group, then every benchmark at its smallest size, with its
# correctness checks and no time target (a benchmark that crashes or
# answers wrong fails CI)
second_lane() {
    local status=0
    main_group 2 || status=$?
    "$NSP_VENV/bin/python" -m benchmarks all --smoke || status=$?
    return $status
}

# parts run in the background, each writing to .test-artifacts/NAME.log,
# which is shown when the part ends
parts=()
run_part() {
    local name=$1
    shift
    "$@" > ".test-artifacts/$name.log" 2>&1 &
    parts+=("$name:$!")
}
wait_parts() {
    local part name status=0 result
    for part in "${parts[@]}"; do
        name=${part%%:*}
        if wait "${part##*:}"; then result=passed; else
            result=FAILED
            status=1
        fi
        echo "=== $name: $result (.test-artifacts/$name.log)"
        cat ".test-artifacts/$name.log"
    done
    parts=()
    return $status
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
if [ "${1:-}" = "--quick" ]; then
    shift
    exec "$NSP_VENV/bin/python" -m pytest -q tests/unit "$@"
fi
if [ "${1:-}" = "--durations" ]; then
    shift
    exec "$NSP_VENV/bin/python" -m pytest --store-durations \
        --durations-path tests/durations.json --ignore=tests/tempest tests "$@"
fi
if [ $# -gt 0 ]; then
    exec "$NSP_VENV/bin/python" -m pytest "$@"
fi
status=0
SECONDS=0
# Heat's, Horizon's and Tempest's virtualenvs are made while the main
# suite runs (pip waits on the network, not the CPU); first_lane(),
# dashboard() and tempest() finish them if that failed
rm -rf .test-artifacts/junit
mkdir -p .test-artifacts/junit
(source tools/heat-venv.sh) > .test-artifacts/heat-venv.log 2>&1 &
heat_venv=$!
(source tools/horizon-venv.sh) > .test-artifacts/horizon-venv.log 2>&1 &
horizon_venv=$!
(source tools/tempest-venv.sh) > .test-artifacts/tempest-venv.log 2>&1 &
tempest_venv=$!
# both cores: the main suite's two groups, Heat's tests behind the first
# and the benchmarks behind the second
run_part main-1-heat first_lane
run_part main-2-benchmarks second_lane
wait_parts || status=1
wait $heat_venv || cat .test-artifacts/heat-venv.log >&2
wait $horizon_venv || cat .test-artifacts/horizon-venv.log >&2
wait $tempest_venv || cat .test-artifacts/tempest-venv.log >&2
# Tempest and the browser wait on Keystone and Chromium more than on the
# CPU: both at once, each against a cloud of its own
run_part tempest tempest --junitxml=.test-artifacts/junit/tempest.xml
run_part dashboard dashboard --junitxml=.test-artifacts/junit/dashboard.xml
wait_parts || status=1
"$NSP_VENV/bin/python" tools/slowest.py .test-artifacts/junit \
    --seconds "$SECONDS"
exit $status
