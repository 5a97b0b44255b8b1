"""``python -m benchmarks [filters|request_filters] [args]``."""

import sys

from benchmarks import bench_filters
from benchmarks import bench_request_filters
from benchmarks import bench_simulator

SUITES = {'filters': bench_filters.main,
          'request_filters': bench_request_filters.main,
          'simulator': bench_simulator.main}

if __name__ == '__main__':
    name = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in SUITES \
        else 'filters'
    args = sys.argv[2:] if len(sys.argv) > 1 and sys.argv[1] in SUITES \
        else sys.argv[1:]
    sys.exit(SUITES[name](args))
