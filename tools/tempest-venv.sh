#!/usr/bin/env bash
# Create (or reuse) the virtualenv of Tempest: tempest 47 brings its own
# pins (stestr, paramiko, oslo.*), which nova's must never meet, so Tempest
# gets its own, as an operator installs it. Our package goes in with
# --no-deps: its Tempest plugin (nova_scoped_policies/tempest) imports
# only tempest and itself, and Tempest finds it through the
# tempest.test_plugins entry point. Sourced by tools/run-tests.sh; prints
# nothing on success but pip's errors.
#
#   NSP_TEMPEST_VENV  where it lives (default: .venv-tempest in the repository)
#   PYTHON            the interpreter that creates it (default: python3.11)
set -euo pipefail

NSP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NSP_TEMPEST_VENV="${NSP_TEMPEST_VENV:-$NSP_ROOT/.venv-tempest}"
if [ -z "${PYTHON:-}" ]; then
    PYTHON="$(command -v python3.11 || command -v python3)"
fi
stamp="$NSP_TEMPEST_VENV/.nsp-installed"
want="$(cat "$NSP_ROOT/tempest-constraints.txt" "$NSP_ROOT/setup.cfg" \
    | sha256sum | cut -c1-16)"

if [ ! -x "$NSP_TEMPEST_VENV/bin/python" ]; then
    echo "creating virtualenv $NSP_TEMPEST_VENV" >&2
    "$PYTHON" -m venv "$NSP_TEMPEST_VENV"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing tempest into $NSP_TEMPEST_VENV (a minute)" >&2
    "$NSP_TEMPEST_VENV/bin/pip" install -q --disable-pip-version-check \
        -c "$NSP_ROOT/tempest-constraints.txt" tempest
    "$NSP_TEMPEST_VENV/bin/pip" install -q --disable-pip-version-check \
        --no-deps -e "$NSP_ROOT"
    echo "$want" > "$stamp"
fi
