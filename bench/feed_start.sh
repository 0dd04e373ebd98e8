#!/usr/bin/env bash
# Start on the shop's own feed (issue 26): the release all-in-one binary
# with CATALOG_FEED set to a feed of SIZE products made by `storefront
# catalog export` (default 100000), beside a start on the generator of
# the same size in the same run. Prints the time from start to
# /health/ready, the peak RSS while loading and on until settled (search
# merges its index after ready; sampled every 50 ms) and the settled RSS (once two reads 5 s apart agree within 2%, at most 90 s).
# STOREFRONT_BIN starts another build (an older one, for a before/after; the
# feed is made by this tree's).
# Usage: bench/feed_start.sh [size] [feed file, made when missing]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000}
work=$(mktemp -d)
feed=${2:-$work/feed.ndjson}
port=18381
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
cargo build --release --quiet -p storefront --bin storefront
[ -s "$feed" ] || ./target/release/storefront catalog export --size "$size" >"$feed"
rss() { awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null || echo 0; }
now_ms() { date +%s%3N; }

# measure LABEL VAR=value...: one start, measured, then stopped.
measure() {
  local label=$1; shift
  local t0; t0=$(now_ms)
  env "$@" LISTEN_ADDR=127.0.0.1:$port INTERNAL_LISTEN_ADDR=127.0.0.1:$((port + 1)) RUST_LOG=warn \
    "${STOREFRONT_BIN:-./target/release/storefront}" >"$work/log" 2>&1 &
  local pid=$! peak=0 r
  pids+=("$pid")
  until curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null; do
    r=$(rss "$pid"); [ "$r" -gt "$peak" ] && peak=$r
    kill -0 "$pid" 2>/dev/null || { echo "the mesh stopped:" >&2; tail -5 "$work/log" >&2; exit 1; }
    sleep 0.05
  done
  local ready=$(( $(now_ms) - t0 ))
  local settled; settled=$(rss "$pid")
  local after=$peak
  for _ in $(seq 1 18); do
    # Sampled on through settling: search merges its segments after ready.
    for _ in $(seq 1 100); do
      r=$(rss "$pid"); [ "$r" -gt "$after" ] && after=$r
      sleep 0.05
    done
    r=$(rss "$pid")
    if [ $(( r * 50 >= settled * 49 && r * 50 <= settled * 51 )) -eq 1 ]; then settled=$r; break; fi
    settled=$r
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true
  printf '%-10s %9s products: ready %6s ms, peak RSS while loading %5s MB (until settled %5s MB), settled %5s MB (%s x)\n' \
    "$label" "$size" "$ready" "$peak" "$after" "$settled" "$(awk -v a="$after" -v b="$settled" 'BEGIN { printf "%.2f", a / b }')"
}
measure feed CATALOG_FEED="$feed"
measure generator CATALOG_SIZE="$size"
