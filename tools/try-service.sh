#!/usr/bin/env bash
# Try the policy service on this machine: a real Placement and the policy
# API (noauth2, SQLite in a temporary directory) with a small seeded cloud,
# until Ctrl-C. Creates .venv on first use (tools/venv.sh). Prints the
# `export` lines of `openstack scoped policy ...`; see
# doc/source/admin/service.rst, "Try it first".
#
#   tools/try-service.sh [--port 8799] [--placement-port 8778]
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh
exec "$NSP_VENV/bin/nova-scoped-policies-manage" try "$@"
