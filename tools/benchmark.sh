#!/usr/bin/env bash
# Run a benchmark in the project's virtualenv (created if needed):
#   tools/benchmark.sh [all|filters|request_filters|simulator|concurrency|stacks|
#                       repair|resilience|export|figures] [args]
# all (the default): every suite in turn, each in a process of its own;
#   --quick shortens P1, P3, P5-P8; --smoke runs every suite at its smallest
#   size with every correctness check and no time target (CI runs it).
# Every figure is printed under its key (benchmarks/figures.py); figures
#   lists them all, with what each is.
# filters (P1): our group filter + weigher vs nova's.
# request_filters (P2): request-filter cost and real-Placement candidates.
# simulator (P3): first the cloud world (benchmarks/worlds.py: host sizes,
#   traits, usage differing host by host, groups of every policy kind):
#   simulate as a user waits (start to exit) and the simulator in-process
#   (world frozen, as simulate runs) at 5,000 hosts and 5,000 placements,
#   50,000 hosts with peak memory, both engines' decisions at 1,000 hosts
#   (the nova engine's rate with its heap not frozen, as nova-scheduler's);
#   then the uniform world (requests of 5 and 40, 100,000 hosts); fake vs
#   real Placement.
# concurrency (P4): concurrent group boots in nova's functional harness,
#   ours (anti-affinity:rack + lock) vs nova's anti-affinity; boots/s ratio.
# stacks (P5): joint decisions vs one at a time on 200 random stacks;
#   decision times at 5,000 to 50,000 hosts with the service's 10 s limit;
#   the peak memory of 10 x 10 at 50,000 hosts.
# repair (P6): repair plans for 1,000 groups of 5 at 5,000 hosts, 5%
#   violating, against a greedy one-move-at-a-time baseline.
# resilience (P7): resilience sweeps on the 5,000-host cloud world as a
#   user waits: N-1 over 125 racks in the process, with the default
#   workers, with 1 and 2 workers; N-2 over the zones in the process, with
#   1 and 2 workers; every report equal to its in-process one.
# export (P8): GET /export's reader on a real Placement (SQLite, served by
#   processes of its own) at 1,000 and 5,000 hosts of 20 servers each:
#   Placement calls and seconds against the reader before P8 (timed at
#   1,000 hosts), the same scenario from both; --big for the big cloud
#   (50,000 hosts; --quick: 1,000 hosts).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh
exec "$NSP_VENV/bin/python" -m benchmarks "$@"
