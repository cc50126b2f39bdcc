#!/usr/bin/env bash
# make bench: runs the benchmarks against a built tree. Usage: scripts/bench.sh BUILD_DIR
# Each subsystem keeps its own section below; figures and their meaning are in
# docs/PERFORMANCE.md.
set -euo pipefail
build=${1:-build}

echo "# machine: $(nproc) cpus, $(lscpu | sed -n 's/^Model name: *//p' | head -1)," \
  "disk $(lsblk -dno NAME,ROTA,SIZE | tr '\n' ' ')"

# ---------------------------------------------------------------------------------------------
# store (src/store, bench/store): durable puts vs etcd 3.4, watch fan-out, compaction stall,
# reopen time. Starts /usr/bin/etcd itself on loopback ports. Stores live under STORE_BENCH_DIR
# (default /tmp), on the disk being measured.
"$build/bench/store_bench" --dir="${STORE_BENCH_DIR:-/tmp}" --repeat=3
# --------------------------------------------------------------------------- end of store ---
