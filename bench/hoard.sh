#!/usr/bin/env bash
# The hoarding attack of issue 44 (bench/hoard.py) against the all-in-one
# binary on the demo catalog, guests from NETWORKS client networks for
# SECONDS, with the gateway believing X-Forwarded-For from loopback.
# Prints hoard.py's JSON line (units held of those in stock, refusals, and
# whether a customer on another network could still buy).
# Usage: bench/hoard.sh [binary, default target/release/storefront] [networks 2] [seconds 100] [greedy|within]
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-target/release/storefront}
networks=${2:-2}
seconds=${3:-100}
mode=${4:-greedy}
port=18391
if [ "$binary" = target/release/storefront ]; then
  cargo build --release --quiet --bin storefront
fi
log=$(mktemp)
TRUSTED_PROXIES=127.0.0.1 LISTEN_ADDR=127.0.0.1:$port INTERNAL_LISTEN_ADDR=127.0.0.1:$((port + 1)) \
  "$binary" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
  sleep 0.2
done
python3 bench/hoard.py "http://127.0.0.1:$port" "$networks" "$seconds" "$mode"
