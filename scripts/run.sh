#!/usr/bin/env bash
# make run: starts the all-in-one server on DATA_DIR and LISTEN, and tells the user how to
# point kubectl at it. Usage: scripts/run.sh BINARY DATA_DIR LISTEN NODES
set -euo pipefail
bin=$1 data=$2 listen=$3 nodes=$4
mkdir -p "$data"
if ! "$bin" server --help >/dev/null 2>&1; then
  echo "converge: the all-in-one server is not built yet; available: $("$bin" --help 2>&1 | head -1)"
  exit 0
fi
cat <<MSG
Starting Converge (data in $data, listening on $listen, $nodes simulated nodes).
In another terminal (README.md, "A walkthrough with kubectl", explains each step):
  export KUBECONFIG=$(realpath "$data")/kubeconfig
  kubectl get nodes
  kubectl create deployment web --image=nginx:1.27 --replicas=2
  kubectl rollout status deployment/web
  kubectl get deployment,replicaset,pods -o wide
  kubectl scale deployment web --replicas=5
  kubectl set image deployment/web nginx=nginx:1.28
  kubectl rollout undo deployment/web
  kubectl get events --sort-by=.lastTimestamp
  kubectl logs deployment/web
Faults on demand (watch drops, compaction, failed writes, stale caches, paused nodes):
  docs/FAULTS.md; start with  $bin server --data-dir $data --enable-fault-injection
Stop with Ctrl-C.
MSG
exec "$bin" server --data-dir "$data" --listen "$listen" --nodes "$nodes"
