#!/bin/bash
# Trains the zstd dictionary the embedded store compresses values with (src/store/dictionaries/).
#
#   scripts/train-store-dictionary.sh BINARY OUT.zdict DICT_ID
#
# Starts `BINARY server` with 30 simulated nodes on loopback in a temporary data dir, runs a mix
# of workloads through kubectl (Deployments with different images, labels, ports, probes, env,
# volumes and sidecars; a Job; Services, ConfigMaps, Secrets), waits for them to settle, reads
# back every object as the store holds it (compact JSON without resourceVersion) and trains a
# 32 KiB dictionary on them with the zstd CLI. The workloads avoid the names and images the
# benchmarks use (the e2e bench's `web` Deployment of pause pods), so that the benchmarks measure
# the dictionary on objects it was not trained on.
#
# A dictionary, once shipped, never changes: data dirs hold frames that name it by DICT_ID.
# A new one gets a new id and the store keeps reading the old (src/store/record.cc).
# Needs kubectl, zstd and python3.
set -euo pipefail
binary=$(realpath "$1")
out=$2
dict_id=$3
work=$(mktemp -d /tmp/converge-dict-XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$binary" server --nodes 30 --data-dir "$work/data" --listen 127.0.0.1:0 >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do [ -f "$work/data/kubeconfig" ] && break; sleep 0.2; done
export KUBECONFIG=$work/data/kubeconfig
kubectl wait --for=condition=Ready nodes --all --timeout=60s >/dev/null

kubectl create namespace shop >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: frontend-config, namespace: shop, labels: {app.kubernetes.io/name: frontend}}
data: {LOG_LEVEL: info, FEATURE_FLAGS: "checkout,search"}
---
apiVersion: v1
kind: Secret
metadata: {name: db-credentials, namespace: shop}
type: Opaque
stringData: {username: shop, password: not-a-real-secret}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: frontend
  namespace: shop
  labels: {app.kubernetes.io/name: frontend, app.kubernetes.io/part-of: shop, tier: frontend}
spec:
  replicas: 40
  selector: {matchLabels: {app.kubernetes.io/name: frontend}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: frontend, app.kubernetes.io/part-of: shop, tier: frontend}
      annotations: {prometheus.io/scrape: "true", prometheus.io/port: "9102"}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25.3
        ports: [{name: http, containerPort: 80}, {name: metrics, containerPort: 9102}]
        resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}}
        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 5}
        volumeMounts: [{name: config, mountPath: /etc/frontend}]
        envFrom: [{configMapRef: {name: frontend-config}}]
      volumes: [{name: config, configMap: {name: frontend-config}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout, namespace: shop, labels: {app: checkout, team: payments}}
spec:
  replicas: 30
  selector: {matchLabels: {app: checkout}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 2, maxUnavailable: 0}}
  template:
    metadata: {labels: {app: checkout, team: payments, version: v2}}
    spec:
      serviceAccountName: default
      terminationGracePeriodSeconds: 45
      containers:
      - name: checkout
        image: ghcr.io/example/checkout:2.14.1
        args: ["--port=8080", "--db=postgres://db.shop.svc:5432/shop"]
        env:
        - {name: DB_USER, valueFrom: {secretKeyRef: {name: db-credentials, key: username}}}
        - {name: GOMAXPROCS, value: "2"}
        ports: [{containerPort: 8080, protocol: TCP}]
        resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {cpu: "1", memory: 512Mi}}
        livenessProbe: {tcpSocket: {port: 8080}, initialDelaySeconds: 10}
      - name: envoy
        image: envoyproxy/envoy:v1.28.0
        ports: [{containerPort: 15001}]
        resources: {requests: {cpu: 50m, memory: 64Mi}}
      tolerations: [{key: dedicated, operator: Equal, value: payments, effect: NoSchedule}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: search-indexer, namespace: default, labels: {app: search-indexer}}
spec:
  replicas: 25
  selector: {matchLabels: {app: search-indexer}}
  template:
    metadata: {labels: {app: search-indexer}}
    spec:
      initContainers:
      - {name: migrate, image: "busybox:1.36", command: ["sh", "-c", "echo migrated"]}
      containers:
      - name: indexer
        image: docker.io/library/python:3.12-slim
        command: ["python", "-m", "indexer"]
        resources: {requests: {memory: 1Gi}}
---
apiVersion: v1
kind: Service
metadata: {name: frontend, namespace: shop}
spec:
  selector: {app.kubernetes.io/name: frontend}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: Service
metadata: {name: checkout, namespace: shop}
spec:
  selector: {app: checkout}
  ports: [{port: 8080}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: report, namespace: default}
spec:
  completions: 5
  parallelism: 5
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: report, image: "perl:5.38", command: ["perl", "-e", "print 42"]}
YAML
kubectl create deployment cache --image=redis:7.2 --replicas=20 -n shop >/dev/null
kubectl wait --for=condition=Available deployment --all -A --timeout=120s >/dev/null
kubectl scale deployment frontend -n shop --replicas=30 >/dev/null
sleep 10

mkdir -p "$work/samples"
for path in api/v1/pods api/v1/nodes api/v1/events api/v1/namespaces api/v1/services \
    api/v1/configmaps api/v1/secrets api/v1/serviceaccounts api/v1/endpoints \
    apis/apps/v1/deployments apis/apps/v1/replicasets apis/batch/v1/jobs \
    apis/coordination.k8s.io/v1/leases; do
  kubectl get --raw "/$path" >"$work/list.json"
  python3 - "$work/list.json" "$work/samples" "${path//\//_}" <<'PY'
import json, sys
lst = json.load(open(sys.argv[1]))
kind = lst["kind"].removesuffix("List")
for i, item in enumerate(lst["items"]):
    item = {"kind": kind, "apiVersion": lst["apiVersion"], **item}
    item["metadata"].pop("resourceVersion", None)
    with open(f"{sys.argv[2]}/{sys.argv[3]}-{i}.json", "w") as f:
        f.write(json.dumps(item, separators=(",", ":"), ensure_ascii=False))
PY
done
echo "$(ls "$work/samples" | wc -l) samples"
zstd -q --train "$work"/samples/* --maxdict=32768 --dictID="$dict_id" -o "$out"
ls -l "$out"
