#!/usr/bin/env bash
# What a start costs in instructions, two builds against each other (issue
# 51's target 4): each build starts under callgrind (valgrind) on a feed of
# SIZE products (default 100,000; made by `storefront catalog export` when
# missing) and is counted from its first instruction until search's index
# is built and its merge into one segment begins, as the mesh turns ready
# (the merge, after ready, is left out: under valgrind how much of it ran
# before a dump at ready moved the count by up to 6%). A start's time on
# this 2-core VM moved from 36.0 to 47.4 s between runs of one build at
# 1,000,000 products (2026-12-08), so a change of a few percent does not
# show in it; its instructions move much less (the work is the same, only
# which thread takes which batch differs). Less the dev issuer's signing
# key made at start (an RSA key: its search for primes takes more or fewer
# steps each time; no cost of the catalog's). Instructions are not time:
# valgrind runs one thread at a time and counts copies and page faults
# differently (bench/start_profile.sh measures time and CPU).
# ROUNDS=N counts each build N times, alternating which goes first, and
# compares the medians; INCLUSIVE='regex;regex' also prints each matching
# function's instructions, inclusive of what it calls (the first function
# each regex matches in callgrind_annotate's inclusive list);
# CALLGRIND_KEEP=<dir>: each run's callgrind profile kept there.
# Usage: [ROUNDS=N] bench/start_instructions.sh OLD_BINARY NEW_BINARY [size, 100000] [feed file]
# (needs valgrind: apt-get install valgrind; about six minutes a run at
# 100,000 products).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 size=${3:-100000} rounds=${ROUNDS:-1}
source bench/common.sh
need valgrind valgrind
bench_session
feed=${4:-$work/feed.ndjson}
[ -s "$feed" ] || "$new" catalog export --size "$size" >"$feed"
port=18930

# count NAME BINARY: prints "NAME instructions".
count() {
  local name=$1 bin=$2 mesh total keygen
  # MIMALLOC_PURGE_DELAY set: the binary would otherwise start itself
  # again with it, and callgrind would follow the first process only.
  env CATALOG_FEED="$feed" LISTEN_ADDR=127.0.0.1:$port INTERNAL_LISTEN_ADDR=127.0.0.1:$((port + 1)) \
    MIMALLOC_PURGE_DELAY=10 RUST_LOG=warn \
    valgrind --tool=callgrind --callgrind-out-file="$work/$name.cg" \
    --dump-before='tantivy::indexer::merger::IndexMerger::write' "$bin" >"$work/$name.log" 2>&1 &
  mesh=$!
  pids+=("$mesh")
  until curl -sf -m 5 "http://127.0.0.1:$port/health/ready" >/dev/null; do
    kill -0 "$mesh" 2>/dev/null || { echo "the $name mesh stopped:" >&2; tail -5 "$work/$name.log" >&2; exit 1; }
    sleep 5
  done
  # The first part is dumped as the index's merge begins (the build
  # merges nothing: its merge policy is none), right after ready; one
  # segment only (no merge): dumped now.
  for _ in $(seq 1 60); do
    [ -s "$work/$name.cg.1" ] && break
    sleep 1
  done
  [ -s "$work/$name.cg.1" ] || callgrind_control --dump "$mesh" >/dev/null
  kill "$mesh"
  wait "$mesh" 2>/dev/null || true
  total=$(callgrind_annotate "$work/$name.cg".1 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  keygen=$(callgrind_annotate --inclusive=yes "$work/$name.cg".1 2>/dev/null |
    awk '/DevIssuer::generate/ {gsub(",", "", $1); print $1; exit}')
  echo "$name $((total - ${keygen:-0}))"
  [ -z "${CALLGRIND_KEEP:-}" ] || cp "$work/$name.cg".1 "$CALLGRIND_KEEP/$name.cg"
  inclusive "$name" "$work/$name.cg".1
}
runs=$(alternating "$rounds" "$old" "$new")
echo "$runs" |
  awk -v size="$size" '{printf "%-6s %16s instructions to ready (%d products)\n", $1, $2, size}'
echo "$runs" | medians 2
