#!/usr/bin/env bash
# Where a checkout phase's CPU goes (issue 51's target 2): the checkout
# driver (bench/floor/src/checkout.rs, SECONDS a phase at WORKERS shoppers)
# against the release mesh at SIZE products on one redis-server, under
# `perf record -a -g`, then the mesh's samples inside the driver's windows
# of one phase (PHASE: 0 open, 1 payment, 2 confirm) shared out by kind
# (bench/phase_profile.py). Prints the driver's rows with each phase over
# its floor (measured under perf, which takes its share of the two cores:
# lower than bench/scale.sh's, for comparing with each other). A build
# with frame pointers gives whole stacks (RUSTFLAGS="-C
# force-frame-pointers=yes"; STOREFRONT_BIN names it).
# Usage: bench/checkout_profile.sh [size, 100000] [seconds, 5] [workers, 64]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000} seconds=${2:-5} workers=${3:-64}
phase=${PHASE:-2}
source bench/common.sh
need perf linux-perf
need redis-server redis-server
cargo build --release --quiet -p storefront -p storefront-bench --bin storefront --bin floor --bin checkout
bench_session
bench_limits_off
port=18620
floor_up $((port + 79))
redis_up $((port + 83))
env CATALOG_SIZE="$size" LISTEN_ADDR=127.0.0.1:$port INTERNAL_LISTEN_ADDR=127.0.0.1:$((port + 10)) \
  REDIS_URL=redis://127.0.0.1:$((port + 83))/ MIMALLOC_PURGE_DELAY="${MIMALLOC_PURGE_DELAY:-10}" \
  RUST_LOG=info "${STOREFRONT_BIN:-./target/release/storefront}" >"$work/mesh.log" 2>&1 &
mesh=$!
pids+=("$mesh")
until curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null; do
  kill -0 "$mesh" 2>/dev/null || { echo "the mesh stopped:" >&2; tail -5 "$work/mesh.log" >&2; exit 1; }
  sleep 0.2
done
stocked "http://127.0.0.1:$port" >"$work/stocked"
perf record -q -a -g -F 499 -k CLOCK_MONOTONIC -o "$work/perf.data" 2>"$work/perf.err" &
recorder=$!
pids+=("$recorder")
MESH_PID=$mesh ./target/release/checkout "http://127.0.0.1:$port" "http://127.0.0.1:$((port + 79))/hop" \
  "$work/stocked" "$seconds" "$workers" >"$work/driver.out" 2>"$work/driver.err"
kill -INT "$recorder"
wait "$recorder" 2>/dev/null || true
awk '/^RESULT/ {
  n = NF - 4; name = $2; for (i = 3; i < n; i++) name = name " " $i
  if (name ~ /^driver floor/) floor = $n
  printf "%-32s %9s req/s", name, $n
  if (floor && name !~ /^driver floor/) printf "  %.3fx the driver floor", $n / floor
  print ""
}' "$work/driver.out"
grep '^MESH CPU' "$work/driver.err" || true
perf script -i "$work/perf.data" -F comm,pid,tid,time,ip,sym 2>/dev/null >"$work/perf.txt"
python3 bench/phase_profile.py "$work/perf.txt" "$work/driver.err" "$mesh" "$phase"
