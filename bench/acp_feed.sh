#!/usr/bin/env bash
# Issue 49's feed for agents: `storefront catalog export --format acp` at
# SIZE products against the shop's own feed export of the same catalog in
# the same run (the baseline: same generator, same products), each timed
# three times (the best kept), with its size in bytes; then the ACP feed
# checked against the protocol's schema (every 100th product).
# Usage: bench/acp_feed.sh [size, default 100000] [market, default us]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000}
market=${2:-us}
bin=${STOREFRONT_BIN:-target/release/storefront}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
best() {  # best NAME ARGS...: the fastest of three runs, in seconds
  local name=$1; shift; local fastest=
  for _ in 1 2 3; do
    local t0; t0=$(date +%s.%N)
    "$bin" catalog export --size "$size" "$@" >"$work/$name"
    local took; took=$(echo "$(date +%s.%N) - $t0" | bc)
    if [ -z "$fastest" ] || [ "$(echo "$took < $fastest" | bc)" = 1 ]; then fastest=$took; fi
  done
  echo "$fastest"
}
feed=$(best feed.ndjson)
acp=$(best acp.json --format acp --market "$market")
printf 'size %s  feed %.2f s (%s bytes)  acp %.2f s (%s bytes)  acp/feed %.2f\n' \
  "$size" "$feed" "$(stat -c %s "$work/feed.ndjson")" "$acp" "$(stat -c %s "$work/acp.json")" \
  "$(echo "$acp / $feed" | bc -l)"
python3 tests/acp/validate.py --feed "$work/acp.json" 100
