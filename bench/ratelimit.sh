#!/usr/bin/env bash
# Rate-limit overhead: the same route (GET /products?limit=1) through three
# meshes in one run: limits off, in process (governor), shared in Redis (one
# Lua GCRA call per scope). Budgets are set too high to deny anything, so
# only the bookkeeping is measured. Usage: bench/ratelimit.sh [duration].
# Needs wrk and redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10s}
cargo build --release --quiet
redis_port=16390
redis-server --port $redis_port --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
pids=($!)
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
high="1000000000/1s"
start() { # port, extra env...
  local port=$1; shift
  env LISTEN_ADDR=127.0.0.1:$port RUST_LOG=warn "$@" ./target/release/storefront >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && return; sleep 0.2; done
}
start 18090 RATE_LIMIT_IP=off RATE_LIMIT_SESSION=off RATE_LIMIT_SEARCH=off RATE_LIMIT_LOGIN=off RATE_LIMIT_LOGIN_EMAIL=off
start 18091 RATE_LIMIT_IP=$high
start 18092 RATE_LIMIT_IP=$high REDIS_URL=redis://127.0.0.1:$redis_port/

run() { # name, port
  local out; out=$(wrk --latency -t2 -c4 -d"$duration" -H 'X-Api-Version: v1.0' "http://127.0.0.1:$2/products?limit=1")
  local rps; rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  printf '%-12s %9s req/s  p50 %8s  p99 %8s\n' "$1" "$rps" "$(awk '$1=="50%" {print $2}' <<<"$out")" "$(awk '$1=="99%" {print $2}' <<<"$out")" >&2
  echo "$rps"
}
off=$(run "no limits" 18090)
local_rps=$(run "in-process" 18091)
redis_rps=$(run "redis" 18092)
awk -v o="$off" -v l="$local_rps" -v r="$redis_rps" 'BEGIN {
  printf "per-request overhead: in-process %.1f us (%.3fx throughput), redis %.1f us (%.3fx throughput)\n",
    (4e6/l - 4e6/o) / 4, l/o, (4e6/r - 4e6/o) / 4, r/o }'
