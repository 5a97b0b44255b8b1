#!/usr/bin/env bash
# Create (or reuse) the virtualenv of the Heat tests: openstack-heat pins
# packages nova's do not accept (SQLAlchemy 2.1), so Heat gets its own.
# Sourced by tools/run-tests.sh; prints nothing on success but pip's errors.
#
#   NSP_HEAT_VENV  where it lives (default: .venv-heat in the repository)
#   PYTHON         the interpreter that creates it (default: python3.11)
set -euo pipefail

NSP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NSP_HEAT_VENV="${NSP_HEAT_VENV:-$NSP_ROOT/.venv-heat}"
if [ -z "${PYTHON:-}" ]; then
    PYTHON="$(command -v python3.11 || command -v python3)"
fi
stamp="$NSP_HEAT_VENV/.nsp-installed"
want="$(cat "$NSP_ROOT/heat-constraints.txt" "$NSP_ROOT/setup.cfg" \
    | sha256sum | cut -c1-16)"

if [ ! -x "$NSP_HEAT_VENV/bin/python" ]; then
    echo "creating virtualenv $NSP_HEAT_VENV" >&2
    "$PYTHON" -m venv "$NSP_HEAT_VENV"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing openstack-heat into $NSP_HEAT_VENV (a few minutes)" >&2
    "$NSP_HEAT_VENV/bin/pip" install -q --disable-pip-version-check \
        -c "$NSP_ROOT/heat-constraints.txt" \
        openstack-heat pytest os-resource-classes os-traits \
        fixtures testtools oslotest testscenarios requests-mock
    # our resource plugins import the pure stack model; Heat brings the
    # rest of what it needs (jsonschema, oslo.*)
    "$NSP_HEAT_VENV/bin/pip" install -q --disable-pip-version-check \
        --no-deps -e "$NSP_ROOT"
    # HeatTestCase looks for etc/heat next to the heat package; the wheel
    # installs it under <venv>/etc
    site="$("$NSP_HEAT_VENV/bin/python" -c \
        'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    if [ -d "$NSP_HEAT_VENV/etc/heat" ] && [ ! -e "$site/etc/heat" ]; then
        mkdir -p "$site/etc"
        ln -s "$NSP_HEAT_VENV/etc/heat" "$site/etc/heat"
    fi
    echo "$want" > "$stamp"
fi
