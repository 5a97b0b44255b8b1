#!/usr/bin/env bash
# Generate etc/nova-scoped-policies/nova-scoped-policies.conf.sample (every
# option of the project with its help) in the project's virtualenv.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh
exec "$NSP_VENV/bin/oslo-config-generator" \
    --config-file etc/nova-scoped-policies/config-generator.conf "$@"
