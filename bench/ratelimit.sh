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
# shellcheck source=bench/common.sh
source bench/common.sh
redis_port=16390
redis-server --port $redis_port --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
pids=($!)
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
high="1000000000/1s"
start 18090 RATE_LIMIT_IP=off RATE_LIMIT_SESSION=off RATE_LIMIT_SEARCH=off RATE_LIMIT_LOGIN=off RATE_LIMIT_LOGIN_EMAIL=off
start 18091 RATE_LIMIT_IP=$high
start 18092 RATE_LIMIT_IP=$high REDIS_URL=redis://127.0.0.1:$redis_port/

off=$(run "no limits" 18090)
local_rps=$(run "in-process" 18091)
redis_rps=$(run "redis" 18092)
awk -v o="$off" -v l="$local_rps" -v r="$redis_rps" 'BEGIN {
  printf "per-request overhead: in-process %.1f us (%.3fx throughput), redis %.1f us (%.3fx throughput)\n",
    (4e6/l - 4e6/o) / 4, l/o, (4e6/r - 4e6/o) / 4, r/o }'
