#!/usr/bin/env bash
# Create (or reuse) the project's virtualenv and install pinned dependencies.
# Sourced by tools/run-tests.sh and the other entry points; prints nothing
# on success except pip's errors.
#
#   NSP_VENV   where the virtualenv lives (default: .venv in the repository)
#   PYTHON     the interpreter that creates it (default: python3.11, python3)
set -euo pipefail

NSP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NSP_VENV="${NSP_VENV:-$NSP_ROOT/.venv}"
if [ -z "${PYTHON:-}" ]; then
    PYTHON="$(command -v python3.11 || command -v python3)"
fi

NSP_EXTRAS="service,cli,simulator,sweep,plot,joint,watcher"
stamp="$NSP_VENV/.nsp-installed"
want="$(cat "$NSP_ROOT/constraints.txt" "$NSP_ROOT/requirements.txt" \
    "$NSP_ROOT/test-requirements.txt" "$NSP_ROOT/setup.cfg" | sha256sum | cut -c1-16)"

if [ ! -x "$NSP_VENV/bin/python" ]; then
    echo "creating virtualenv $NSP_VENV" >&2
    "$PYTHON" -m venv "$NSP_VENV"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing pinned dependencies into $NSP_VENV (about a minute)" >&2
    "$NSP_VENV/bin/pip" install -q --disable-pip-version-check \
        -c "$NSP_ROOT/constraints.txt" \
        -r "$NSP_ROOT/requirements.txt" -r "$NSP_ROOT/test-requirements.txt"
    # every extra: the tests cover the service, the CLI and the simulator
    "$NSP_VENV/bin/pip" install -q --disable-pip-version-check \
        -c "$NSP_ROOT/constraints.txt" \
        -e "$NSP_ROOT[$NSP_EXTRAS]"
    echo "$want" > "$stamp"
fi
