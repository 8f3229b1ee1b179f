#!/usr/bin/env bash
# What `cgov daemon --kubernetes` costs the daemon's process: VmHWM and CPU after listing N pods
# from tests/fake_kube/api_server.py (shaped as the API server), against the same daemon without
# --kubernetes, on the fake driver's shared 4-GPU box. Part of `make bench`; docs/kubernetes.md
# quotes its figures.
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

printf '%-22s %10s %10s %12s\n' "daemon" "VmHWM KiB" "VmRSS KiB" "CPU ms"
for pods in off 0 110 5000 20000; do
  args=(daemon --db "$work/$pods.db" --interval 1s --nvml-lib "$build/fake_nvml/full/libnvidia-ml.so.1"
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
  CGOV_FAKE_NVML_SCENARIO="$src/tests/fake_nvml/scenarios/shared_box.json" \
    "$build/cgov" "${args[@]}" 2>"$work/$pods.err" &
  pid=$!
  sleep "$settle"
  hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
  ticks=$(awk '{print $14 + $15}' /proc/$pid/stat)
  hz=$(getconf CLK_TCK)
  kill "$pid"; wait "$pid" || true
  label=$([ "$pods" = off ] && echo "without --kubernetes" || echo "--kubernetes, $pods pods")
  printf '%-22s %10s %10s %12s\n' "$label" "$hwm" "$rss" "$((ticks * 1000 / hz))"
  if [ "$pods" != off ] && ! grep -q "$pods pod(s)" "$work/$pods.err"; then
    echo "kube_overhead: the daemon did not list $pods pods:" >&2; cat "$work/$pods.err" >&2; exit 1
  fi
done
