#!/usr/bin/env bash
# Telemetry overhead: listing pages (varied offsets and sorts, the scale
# benchmark's mix) through two meshes served at once: telemetry off
# (OTEL_SDK_DISABLED=true, RUST_LOG=warn, no metrics port) as the baseline,
# and the defaults a deployment runs with (RUST_LOG=info: an access line a
# request; a span per request and per gRPC call, traceparent propagated,
# trace ids in logs; the Prometheus recorder on). 2 s bursts at 64
# connections alternate between the two, ROUNDS each, so that the machine's
# drift falls on both alike. Prints each side's requests a second and the
# mesh's CPU time a request (from /proc), and on/off ratios.
# Usage: bench/telemetry.sh [rounds] [size]. STOREFRONT_BIN: another build
# (a before and after: run it once per build and compare the ratios).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-8} size=${2:-100000}
[ -n "${STOREFRONT_BIN:-}" ] || cargo build --release --quiet -p storefront --bin storefront
# shellcheck source=bench/common.sh
source bench/common.sh
pids=()
work=$(mktemp -d)
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
off="RATE_LIMIT_IP=off RATE_LIMIT_SESSION=off RATE_LIMIT_SEARCH=off CATALOG_SIZE=$size"
# Each its own internal port: two meshes on one machine.
start 18190 $off INTERNAL_LISTEN_ADDR=127.0.0.1:18290 OTEL_SDK_DISABLED=true
start 18191 $off INTERNAL_LISTEN_ADDR=127.0.0.1:18291 METRICS_LISTEN_ADDR=127.0.0.1:19464 RUST_LOG=info
sleep 10 # search merges its segments after ready
RANDOM=42
sorts=(name:asc price:desc price:asc createdAt:desc popularity:desc brand:asc)
for _ in $(seq 0 499); do
  echo "/products?limit=20&offset=$(( RANDOM % 50 * 20 ))&sort=${sorts[RANDOM % ${#sorts[@]}]}"
done >"$work/list"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# burst PORT PID: "req/s cpu_us_a_request" of one 2 s burst.
burst() {
  local c0 c1 rps
  c0=$(cpu_ticks "$2")
  rps=$(WRK_PATHS="$work/list" wrk -t2 -c64 -d2s -s bench/scale.lua -H 'X-Api-Version: v1.0' \
    "http://127.0.0.1:$1" | awk '/^RESULT/ {print $2}')
  c1=$(cpu_ticks "$2")
  awk -v r="$rps" -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.1f %.1f\n", r, t * 1e6 / hz / (r * 2)}'
}
for i in $(seq 1 "$rounds"); do
  if (( i % 2 )); then a=$(burst 18190 "${pids[0]}"); b=$(burst 18191 "${pids[1]}")
  else b=$(burst 18191 "${pids[1]}"); a=$(burst 18190 "${pids[0]}"); fi
  echo "$a $b"
done | awk '{ro += $1; co += $2; rt += $3; ct += $4; n++}
  END {printf "telemetry off      %7.0f req/s  %5.0f us CPU a request\n", ro / n, co / n
       printf "logs+traces+metrics %6.0f req/s  %5.0f us CPU a request\n", rt / n, ct / n
       printf "on/off: %.3fx throughput, %.3fx CPU a request (+%.0f us)\n", rt / ro, ct / co, (ct - co) / n}'
curl -sf http://127.0.0.1:19464/metrics | grep -q '^http_requests_total'
