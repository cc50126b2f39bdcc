#!/bin/bash
# CPU per create of the bench client and of the server in `converge bench api` at 64 clients.
#
#   bench/api/cpu_per_create.sh BENCH_BINARY SERVER_BINARY [LABEL]
#
# BENCH_BINARY runs the bench (its client library drives the load); SERVER_BINARY is the
# `converge apiserver` it starts (--binary), so a client change and a server change can be told
# apart. Both processes' CPU is read from /proc/PID/stat over seconds 5-10 of a 12 s level and
# divided by the level's creates. Needs python3.
set -euo pipefail
bench=$1
server=$2
label=${3:-}
json=$(mktemp /tmp/cpu-per-create-XXXXXX.json)
trap 'rm -f "$json"' EXIT
"$bench" bench api --binary "$server" --clients 64 --seconds 12 --no-etcd --json "$json" \
  >/dev/null 2>&1 &
bench_pid=$!
sleep 5
server_pid=$(pgrep -P "$bench_pid" | head -1)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
b0=$(cpu "$bench_pid")
s0=$(cpu "$server_pid")
sleep 5
b1=$(cpu "$bench_pid")
s1=$(cpu "$server_pid")
wait "$bench_pid"
ticks=$(getconf CLK_TCK)
python3 - "$json" "$label" "$ticks" "$b0" "$b1" "$s0" "$s1" <<'PY'
import json, sys
path, label, ticks, b0, b1, s0, s1 = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
d = json.load(open(path))
rate = d["api_64_clients_creates_per_second"]
per = lambda t0, t1: (t1 - t0) / ticks * 1e6 / (rate * 5)
print(f"{label:22s} {rate:7.0f} creates/s  p99 {d['api_64_clients_p99_ms']:5.1f} ms  "
      f"bench {per(b0, b1):5.1f} us/create  server {per(s0, s1):5.1f} us/create")
PY
