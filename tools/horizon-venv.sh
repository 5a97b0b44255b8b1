#!/usr/bin/env bash
# Create (or reuse) the virtualenv of the dashboard: Horizon 27 and
# Keystone 30 pin Django 5.2 and SQLAlchemy 2.1, which nova's pins refuse,
# so they get their own. The plugin is installed in it as a deployment
# installs it: the package (editable) and its enabled/ files linked into
# openstack_dashboard/local/enabled. Sourced by tools/run-tests.sh; prints
# nothing on success but pip's errors.
#
#   NSP_HORIZON_VENV  where it lives (default: .venv-horizon in the repository)
#   PYTHON            the interpreter that creates it (default: python3.11)
set -euo pipefail

NSP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NSP_HORIZON_VENV="${NSP_HORIZON_VENV:-$NSP_ROOT/.venv-horizon}"
if [ -z "${PYTHON:-}" ]; then
    PYTHON="$(command -v python3.11 || command -v python3)"
fi
stamp="$NSP_HORIZON_VENV/.nsp-installed"
want="$(cat "$NSP_ROOT/horizon-constraints.txt" "$NSP_ROOT/setup.cfg" \
    | sha256sum | cut -c1-16)"

if [ ! -x "$NSP_HORIZON_VENV/bin/python" ]; then
    echo "creating virtualenv $NSP_HORIZON_VENV" >&2
    "$PYTHON" -m venv "$NSP_HORIZON_VENV"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing Horizon and Keystone into $NSP_HORIZON_VENV (a few minutes)" >&2
    "$NSP_HORIZON_VENV/bin/pip" install -q --disable-pip-version-check \
        -c "$NSP_ROOT/horizon-constraints.txt" \
        horizon keystone microversion-parse selenium pytest pytest-django
    # the plugin needs what Horizon brings (Django, keystoneauth1,
    # oslo.config) and microversion-parse above
    "$NSP_HORIZON_VENV/bin/pip" install -q --disable-pip-version-check \
        --no-deps -e "$NSP_ROOT"
    echo "$want" > "$stamp"
fi
# enabled/ as devstack installs it: every file linked, none left dangling
enabled="$("$NSP_HORIZON_VENV/bin/python" -c \
    'import openstack_dashboard.local.enabled as e, os; print(os.path.dirname(e.__file__))')"
find "$enabled" -maxdepth 1 -name '_9*_scoped_policies_*.py' -xtype l -delete
for file in "$NSP_ROOT"/nova_scoped_policies/dashboard/enabled/_[0-9]*.py; do
    ln -sfn "$file" "$enabled/$(basename "$file")"
done
