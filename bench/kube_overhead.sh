#!/usr/bin/env bash
# What `cgov daemon --kubernetes` costs the daemon's process: VmHWM and CPU after listing N pods
# from tests/fake_kube/api_server.py (shaped as the API server), against the same daemon without
# --kubernetes, on the fake driver's shared 4-GPU box; and with --pod-resources too (110 pods,
# tests/fake_kube/pod_resources_server.py answering every GPU allocated). Part of `make bench`;
# docs/kubernetes.md quotes its figures.
#   bench/kube_overhead.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: bench/kube_overhead.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
servers=()
cleanup() {
  for p in "${servers[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cp -r "$src/tests/fixtures/proc/shared-box" "$work/root"
settle=${CGOV_BENCH_SETTLE_S:-20}

printf '%-36s %10s %10s %12s\n' "daemon" "VmHWM KiB" "VmRSS KiB" "CPU ms"
# The fake kubelet: each of the box's 4 GPUs allocated to a generated pod.
answer="$work/allocations.textproto"
: >"$answer"
for i in 0 1 2 3; do
  printf 'pod_resources { name: "batch-%d" namespace: "ns-%d" containers { name: "main" devices { resource_name: "nvidia.com/gpu" device_ids: "GPU-fa4e0000-0000-4000-8000-%012d" } } }\n' \
    "$i" "$i" "$i" >>"$answer"
done
# Debian's python3, whose python3-grpcio scripts/install-deps installs (not another python3 on PATH).
/usr/bin/python3 "$src/tests/fake_kube/pod_resources_server.py" "$work/kubelet.sock" "$answer" \
  "$work/kubelet.log" &
servers+=($!)
for _ in $(seq 200); do [ -S "$work/kubelet.sock" ] && break; sleep 0.05; done
[ -S "$work/kubelet.sock" ] || { echo "kube_overhead: the fake kubelet did not start" >&2; exit 1; }

for run in off 0 110 5000 20000 110+pr; do
  pods=${run%+pr}
  args=(daemon --db "$work/$run.db" --interval 1s --nvml-lib "$build/fake_nvml/full/libnvidia-ml.so.1"
        --host-root "$work/root")
  if [ "$pods" != off ]; then
    printf '{"node":"gpu-node-1","token":null,"generate":%d,"watches":[{"events":[],"then":"hold"}]}' \
      "$pods" >"$work/s$pods.json"
    python3 "$src/tests/fake_kube/api_server.py" "$work/s$pods.json" "$work/p$pods" "$work/l$pods" &
    servers+=($!)
    for _ in $(seq 100); do [ -s "$work/p$pods" ] && break; sleep 0.05; done
    args+=(--kubernetes --kube-api "http://127.0.0.1:$(cat "$work/p$pods")" --kube-token-file ""
           --kube-ca-file "" --node-name gpu-node-1)
  fi
  [ "$run" != "$pods" ] && args+=(--pod-resources --pod-resources-socket "$work/kubelet.sock")
  CGOV_FAKE_NVML_SCENARIO="$src/tests/fake_nvml/scenarios/shared_box.json" \
    "$build/cgov" "${args[@]}" 2>"$work/$run.err" &
  pid=$!
  sleep "$settle"
  hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
  ticks=$(awk '{print $14 + $15}' /proc/$pid/stat)
  hz=$(getconf CLK_TCK)
  kill "$pid"; wait "$pid" || true
  label=$([ "$pods" = off ] && echo "without --kubernetes" || echo "--kubernetes, $pods pods")
  [ "$run" != "$pods" ] && label="$label, --pod-resources"
  printf '%-36s %10s %10s %12s\n' "$label" "$hwm" "$rss" "$((ticks * 1000 / hz))"
  if [ "$pods" != off ] && ! grep -q "$pods pod(s)" "$work/$run.err"; then
    echo "kube_overhead: the daemon did not list $pods pods:" >&2; cat "$work/$run.err" >&2; exit 1
  fi
  if [ "$run" != "$pods" ] && ! grep -q "4 device(s) allocated" "$work/$run.err"; then
    echo "kube_overhead: the daemon did not read the allocations:" >&2; cat "$work/$run.err" >&2
    exit 1
  fi
done
