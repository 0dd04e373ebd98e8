#!/usr/bin/env bash
# Memory of each program run on its own (as pods run them), for the chart's
# requests and limits: every program started separately on its default
# local port (APP_ENV=local, the dev issuer, in memory), the catalog at SIZE
# products (default 100000), then 20 s of listings, searches and product
# pages at 64 connections; prints each program's RSS once ready, its peak
# (VmHWM) and its RSS after the load.
# Usage: bench/program_rss.sh [size] [feed file: CATALOG_FEED instead of the generator]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000}
feed=${2:-}
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
cargo build --release --quiet -p storefront --bin storefront
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }
declare -A pid
start() {
  local program=$1; shift
  env APP_ENV=local RUST_LOG=warn "$@" ./target/release/storefront "$program" >/dev/null 2>&1 &
  pid[$program]=$!
  pids+=($!)
}
catalog_env=(CATALOG_SIZE="$size")
[ -n "$feed" ] && catalog_env=(CATALOG_FEED="$feed")
start dev-issuer
sleep 0.5
start catalog "${catalog_env[@]}"
for program in search cart orders customers content; do start "$program"; done
# The load is the programs', not the edge's budgets.
start gateway RATE_LIMIT_IP=100000000/60s RATE_LIMIT_SEARCH=100000000/60s
for _ in $(seq 1 600); do
  curl -sf http://127.0.0.1:8080/health/ready >/dev/null && break
  sleep 0.5
done
curl -sf http://127.0.0.1:8080/health/ready >/dev/null || { echo "the mesh never became ready" >&2; exit 1; }
sleep 5
kib() { awk -v k="$2" '$1 == k":" {print int($2 / 1024)}' "/proc/${pid[$1]}/status"; }
declare -A ready
for program in "${!pid[@]}"; do ready[$program]=$(kib "$program" VmRSS); done
hdr=(-H 'X-Api-Version: v1.0')
for path in '/products?limit=20' '/search?query=shirt' '/search?query=linen%20shirt' '/products?limit=20&sort=price&offset=5000'; do
  wrk -t2 -c64 -d5s "${hdr[@]}" "http://127.0.0.1:8080$path" >/dev/null
done
printf '%-11s %10s %9s %11s\n' program "ready MB" "peak MB" "after MB"
for program in dev-issuer gateway catalog search cart orders customers content; do
  printf '%-11s %10s %9s %11s\n' "$program" "${ready[$program]}" "$(kib "$program" VmHWM)" "$(kib "$program" VmRSS)"
done
