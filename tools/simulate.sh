#!/usr/bin/env bash
# The main job: run a what-if scheduling scenario on an embedded Placement.
# Creates .venv with the pinned dependencies on first use.
#   tools/simulate.sh examples/rack-anti-affinity.yaml [--format json]
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh
exec "$NSP_VENV/bin/nova-scoped-policies" simulate "${@:-examples/rack-anti-affinity.yaml}"
