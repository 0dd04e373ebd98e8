#!/usr/bin/env bash
# Search at scale: index build time for CATALOG_SIZE products (default
# 100000) from the service's own log, then query latency p50/p99 with wrk
# for an exact, a fuzzy and a two-word query, against GET /products in the
# same run. Usage: bench/search.sh [size] [duration]. Needs wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000}
duration=${2:-10s}
port=18081
log=$(mktemp)
cargo build --release --quiet
CATALOG_SIZE=$size LISTEN_ADDR=127.0.0.1:$port RUST_LOG=info ./target/release/storefront >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
  sleep 0.2
done
grep -a -m1 '"message":"catalog built and indexed"' "$log" | grep -o '"fields":{[^}]*}' || true
grep -a -m1 '"message":"search index built"' "$log" | grep -o '"fields":{[^}]*}' || true

run() { # name, url
  local out; out=$(wrk --latency -t2 -c4 -d"$duration" -H 'X-Api-Version: v1.0' "$2")
  local rps; rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  printf '%-22s %9s req/s  p50 %8s  p99 %8s\n' "$1" "$rps" "$(awk '$1=="50%" {print $2}' <<<"$out")" "$(awk '$1=="99%" {print $2}' <<<"$out")" >&2
  echo "$rps"
}
base=$(run "products (baseline)" "http://127.0.0.1:$port/products?limit=20")
exact=$(run "search shirt" "http://127.0.0.1:$port/search?query=shirt&limit=20")
fuzzy=$(run "search shrit (typo)" "http://127.0.0.1:$port/search?query=shrit&limit=20")
two=$(run "search classic cotton" "http://127.0.0.1:$port/search?query=classic%20cotton&limit=20")
suggest=$(run "suggestions sh" "http://127.0.0.1:$port/search/suggestions?query=sh")
awk -v b="$base" -v e="$exact" -v f="$fuzzy" -v t="$two" -v s="$suggest" 'BEGIN {
  printf "throughput vs /products: exact %.2fx, typo %.2fx, two words %.2fx, suggestions %.2fx\n", e/b, f/b, t/b, s/b }'
