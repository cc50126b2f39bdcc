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

# ---------------------------------------------------------------------------------------------
# converge bench (src/bench, issue #9): the user-facing scenarios, each against a server process
# the bench starts itself (loopback, temporary data dir under BENCH_DIR, stopped by its PID).
# Moderate sizes here; docs/PERFORMANCE.md ("converge bench") has the commands at target sizes.
# Figures also go to BENCH_OUT (default /tmp/converge-bench) as one JSON file per scenario.
out=${BENCH_OUT:-/tmp/converge-bench}
mkdir -p "$out"
bench_dir=${BENCH_DIR:-/tmp}
echo "# converge bench: $(uptime)"
"$build/converge" bench api --seconds 5 --dir "$bench_dir" --json "$out/api.json"
"$build/converge" bench watch --watchers 1000 --rate 50 --seconds 10 --dir "$bench_dir" \
  --json "$out/watch.json"
"$build/converge" bench list --pods 20000 --dir "$bench_dir" --json "$out/list.json"
"$build/converge" bench startup --objects 20000 --dir "$bench_dir" --json "$out/startup.json"
"$build/converge" bench e2e --nodes 1000 --pods 10000 --dir "$bench_dir" --json "$out/e2e.json"
# -------------------------------------------------------------------- end of converge bench ---
