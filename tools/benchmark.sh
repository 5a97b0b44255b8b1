#!/usr/bin/env bash
# Run a benchmark in the project's virtualenv (created if needed):
#   tools/benchmark.sh [filters|request_filters|simulator] [args]
# filters (P1, the default): our group filter + weigher vs nova's.
# request_filters (P2): request-filter cost and real-Placement candidates.
# simulator (P3): placements/s at 5,000 hosts; fake vs real Placement.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh
exec "$NSP_VENV/bin/python" -m benchmarks "$@"
