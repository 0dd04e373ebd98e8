#!/usr/bin/env bash
# System calls a request: the release mesh at SIZE generated products
# (default 100000), one route driven by wrk at 16 connections for SECONDS
# (default 5) while `strace -c -f` counts the mesh's calls; prints the
# calls of each kind per request, most first. A request through the
# gateway and one service needs three reads and three writes (the
# shopper's request in, the call out, its reply in, the answer out): what
# is over that is frames, wake-ups or work a hop could do without.
# strace slows the mesh several times over: read the counts, not the rate.
# ROUTE: a path (default /products?limit=20) or a file of paths, one a line.
# STOREFRONT_BIN measures another build (bench/common.sh).
# RUST_LOG=info counts the log lines' writes too (the mesh logs warnings only by default here).
# Usage: bench/syscalls.sh [route] [seconds] [size]
set -euo pipefail
cd "$(dirname "$0")/.."
route=${1:-/products?limit=20}
seconds=${2:-5}
size=${3:-100000}
port=18691
source bench/common.sh
bench_session

for tool in wrk strace; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "installing $tool" >&2
    apt-get update -qq && apt-get install -y -qq "$tool" >/dev/null
  fi
done
[ -n "${STOREFRONT_BIN:-}" ] || cargo build --release --quiet -p storefront --bin storefront
if [ -f "$route" ]; then cp "$route" "$work/paths"; else echo "$route" >"$work/paths"; fi

export RATE_LIMIT_IP=off RATE_LIMIT_SESSION=off RATE_LIMIT_SEARCH=off RATE_LIMIT_SERVICE=off
start $port CATALOG_SIZE="$size" ${RUST_LOG:+RUST_LOG="$RUST_LOG"}
base="http://127.0.0.1:$port"
for _ in $(seq 1 300); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.5; done
curl -sf "$base/health/ready" >/dev/null || { echo "the mesh did not become ready" >&2; exit 1; }
mesh=${pids[-1]}
drive() { WRK_PATHS="$work/paths" wrk -t1 -c16 -d"$1s" -H 'X-Api-Version: v1.0' -s bench/scale.lua "$base"; }
drive 2 >/dev/null
strace -c -f -p "$mesh" -o "$work/counts" 2>/dev/null &
tracer=$!
sleep 0.5
result=$(drive "$seconds" | grep '^RESULT')
kill -INT "$tracer"
wait "$tracer" 2>/dev/null || true
requests=$(awk -v s="$seconds" '{ printf "%d", $2 * s }' <<<"$result")
errors=$(awk '{ print $6 }' <<<"$result")
echo "$(sed -n 1p "$work/paths") and $(($(wc -l <"$work/paths") - 1)) more: about $requests requests, $errors failed, under strace"
awk -v n="$requests" '$NF != "total" && $4 ~ /^[0-9]+$/ && n > 0 {
  printf "%-16s %9d calls %7.2f a request\n", $NF, $4, $4 / n }' "$work/counts" | sort -k2 -n -r | head -10
