#!/usr/bin/env bash
# Login cost: POST /auth/login (argon2id verify + token issue) against a
# baseline GET /products?limit=1 through the same mesh, in one run.
# Usage: bench/login.sh [duration, default 10s]. Needs wrk (apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10s}
port=18080
cargo build --release --quiet
LISTEN_ADDR=127.0.0.1:$port RUST_LOG=warn ./target/release/storefront &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
  sleep 0.1
done

run() { # name, wrk args...
  local name=$1; shift
  local out; out=$(wrk --latency -t2 -c4 -d"$duration" "$@")
  local rps; rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  local p50; p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  local p99; p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  printf '%-10s %10s req/s  p50 %8s  p99 %8s\n' "$name" "$rps" "$p50" "$p99" >&2
  echo "$rps"
}
base=$(run baseline -H 'X-Api-Version: v1.0' "http://127.0.0.1:$port/products?limit=1")
login=$(run login -s bench/login.lua "http://127.0.0.1:$port/auth/login")
awk -v b="$base" -v l="$login" 'BEGIN {
  printf "login costs %.1fx a catalog read; %.1f ms of CPU per login on this machine (2 cores busy / %.0f logins/s)\n", b/l, 2000/l, l }'
