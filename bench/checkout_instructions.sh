#!/usr/bin/env bash
# What a checkout costs in instructions, two builds against each other:
# each build's mesh runs under callgrind (valgrind) on one redis-server
# with SIZE products (default 1000), and the scale benchmark's checkout
# driver (bench/floor/src/checkout.rs) runs one round of WORKERS shoppers
# against it (ten carts each: every cart made, opened, paid and confirmed;
# a round's orders are cancelled only before another round, so one round
# makes the same work whatever the timing). Instructions are counted from
# the moment every shopper has signed up (the driver's
# SHOPPERS_READY_FILE: not the password hashing) until the mesh is idle
# again (the provider's last webhooks applied), less the dev issuer's
# token mints (each program's first call mints one: a constant, not a
# session's cost), and divided by the sessions. The work is the same in
# every run, but how it is shared out follows the run's timing (how many
# writes share one compare-and-set, how many retry): one build counted
# twice moved by 2.3-3.2% at 16 and 64 shoppers (2026-12-08). ROUNDS=N
# counts each build N times, alternating which goes first, and compares
# the medians; a change smaller than the builds' spread does not show.
# Instructions are not time: callgrind counts
# SHA-NI, AVX-512 copies and the kernel's work differently or not at all
# (bench/checkout_ab.sh measures time and CPU side by side).
# INCLUSIVE='regex;regex': also each matching function's instructions a
# session, inclusive of what it calls (the first function each regex
# matches in callgrind_annotate's inclusive list), to see one part move;
# CALLGRIND_KEEP=<dir>: each run's callgrind profile kept there.
# Usage: [ROUNDS=N] bench/checkout_instructions.sh OLD_BINARY NEW_BINARY [workers, 16] [size, 1000]
# (needs valgrind: apt-get install valgrind; about two minutes a run at 16
# shoppers, three and a half at 64).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 workers=${3:-16} size=${4:-1000} rounds=${ROUNDS:-1}
source bench/common.sh
need valgrind valgrind
need redis-server redis-server
cargo build --release --quiet -p storefront-bench --bin floor --bin checkout
bench_session
bench_limits_off
port=18900
floor_up $((port + 99))

# count NAME BINARY: prints "NAME instructions sessions per_session".
count() {
  local name=$1 bin=$2 redis redis_pid mesh driver
  redis_up $((port + 83))
  redis=$redis_pid
  # MIMALLOC_PURGE_DELAY set: the binary would otherwise start itself
  # again with it, and callgrind would follow the first process only.
  env CATALOG_SIZE="$size" LISTEN_ADDR=127.0.0.1:$port INTERNAL_LISTEN_ADDR=127.0.0.1:$((port + 10)) \
    REDIS_URL=redis://127.0.0.1:$((port + 83))/ MIMALLOC_PURGE_DELAY=10 RUST_LOG=warn \
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/$name.cg" "$bin" \
    >"$work/mesh-$name.log" 2>&1 &
  mesh=$!
  pids+=("$mesh")
  until curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null; do
    kill -0 "$mesh" 2>/dev/null || { echo "the $name mesh stopped:" >&2; cat "$work/mesh-$name.log" >&2; exit 1; }
    sleep 1
  done
  stocked "http://127.0.0.1:$port" >"$work/stocked"
  SHOPPERS_READY_FILE="$work/ready-$name" MESH_PID=$mesh ./target/release/checkout "http://127.0.0.1:$port" \
    "http://127.0.0.1:$((port + 99))/hop" "$work/stocked" 0 "$workers" >"$work/out-$name" 2>"$work/err-$name" &
  driver=$!
  until [ -e "$work/ready-$name" ]; do
    kill -0 "$driver" 2>/dev/null || { echo "the driver stopped:" >&2; cat "$work/err-$name" >&2; exit 1; }
    sleep 0.05
  done
  callgrind_control --instr=on "$mesh" >/dev/null
  wait "$driver"
  # Idle: under 50 ms of CPU in a second (at most 60 s).
  local t0 t1
  t1=$(awk '{print $14 + $15}' "/proc/$mesh/stat")
  for _ in $(seq 1 60); do
    sleep 1
    t0=$t1 t1=$(awk '{print $14 + $15}' "/proc/$mesh/stat")
    [ $((t1 - t0)) -lt 5 ] && break
  done
  callgrind_control --dump "$mesh" >/dev/null
  kill "$mesh" "$redis"
  wait "$mesh" "$redis" 2>/dev/null || true
  local total mint sessions
  total=$(callgrind_annotate "$work/$name.cg".1 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  mint=$(callgrind_annotate --inclusive=yes "$work/$name.cg".1 2>/dev/null |
    awk '/DevIssuer::mint_claims/ {gsub(",", "", $1); print $1; exit}')
  sessions=$(awk '/^MESH CPU sessions/ {print $4}' "$work/err-$name")
  grep -q ' 0$' <(grep '^RESULT checkout confirm' "$work/out-$name") ||
    echo "$name: requests failed: $(grep '^RESULT' "$work/out-$name")" >&2
  echo "$name $((total - ${mint:-0})) $sessions $(((total - ${mint:-0}) / sessions))"
  # The whole profile kept for a closer look (callgrind_annotate, kcachegrind).
  [ -z "${CALLGRIND_KEEP:-}" ] || cp "$work/$name.cg".1 "$CALLGRIND_KEEP/$name.cg"
  inclusive "$name" "$work/$name.cg".1 "$sessions"
}
# Rounds alternate which build goes first: a build's count moves with the
# run's timing (how many writes share a compare-and-set, how many retry),
# by up to 3.2% between runs of one build.
runs=$(alternating "$rounds" "$old" "$new")
echo "$runs" |
  awk '{printf "%-6s %15s instructions over %5d sessions: %11d a session\n", $1, $2, $3, $4}'
echo "$runs" | medians 4
