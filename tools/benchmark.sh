#!/usr/bin/env bash
# Run the benchmarks in the project's virtualenv (created if needed).
# Extra arguments go to the benchmark, e.g. tools/benchmark.sh --quick
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh
exec "$NSP_VENV/bin/python" -m benchmarks.bench_filters "$@"
