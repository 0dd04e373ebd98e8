#!/usr/bin/env bash
# Telemetry overhead: the same route (GET /products?limit=1, gateway ->
# catalog) through two meshes in one run: traces and metrics off
# (OTEL_SDK_DISABLED=true, no metrics port) as the baseline, and the
# defaults a deployment runs with (a span per request and per gRPC call,
# traceparent propagated, trace ids in logs, Prometheus recorder on).
# Usage: bench/telemetry.sh [duration]. Needs wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10s}
cargo build --release --quiet
# shellcheck source=bench/common.sh
source bench/common.sh
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
off="RATE_LIMIT_IP=off RATE_LIMIT_SESSION=off RATE_LIMIT_SEARCH=off"
# Each its own internal port: two meshes on one machine.
start 18190 $off INTERNAL_LISTEN_ADDR=127.0.0.1:18290 OTEL_SDK_DISABLED=true
start 18191 $off INTERNAL_LISTEN_ADDR=127.0.0.1:18291 METRICS_LISTEN_ADDR=127.0.0.1:19464

base=$(run "telemetry off" 18190)
on=$(run "traces + metrics" 18191)
curl -sf http://127.0.0.1:19464/metrics | grep -c '^http_requests_total' >/dev/null
awk -v b="$base" -v t="$on" 'BEGIN {
  printf "per-request overhead: %.1f us (%.3fx throughput)\n", (4e6/t - 4e6/b) / 4, t/b }'
