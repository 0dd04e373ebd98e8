#!/usr/bin/env bash
# Two builds of the storefront binary against each other on search, in
# one sitting: each started alone at SIZE products (default 100000), then
# listings, one word, typo and two-word searches (the scale benchmark's
# word lists) for 5 s each at 64 connections; ROUNDS times (default 2),
# alternating. Prints requests per second per route and binary.
# Usage: bench/search_ab.sh OLD_BINARY NEW_BINARY [size] [rounds]
# (make OLD_BINARY from a worktree with its own CARGO_TARGET_DIR: workspace
# crates' artifacts are named alike whatever their path).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 size=${3:-100000} rounds=${4:-2}
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }
words=(shirt dress jeans boots sneaker scarf jacket throw mug vase linen wool cotton leather classic premium)
typos=(shrit dresss jaens bots sneakr scraf jackte thorw linnen wol cottn lether clasic premum)
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
RANDOM=7
for _ in $(seq 0 499); do echo "/search?query=${words[RANDOM % ${#words[@]}]}&limit=20"; done >"$work/word"
for _ in $(seq 0 499); do echo "/search?query=${typos[RANDOM % ${#typos[@]}]}&limit=20"; done >"$work/typo"
for _ in $(seq 0 499); do
  echo "/search?query=${words[RANDOM % ${#words[@]}]}%20${words[RANDOM % ${#words[@]}]}&limit=20"
done >"$work/two"
echo "/products?limit=20" >"$work/list"
export RATE_LIMIT_IP=off RATE_LIMIT_SESSION=off RATE_LIMIT_SEARCH=off
for round in $(seq 1 "$rounds"); do
  for label in old new; do
    bin=$old; [ "$label" = new ] && bin=$new
    CATALOG_SIZE=$size LISTEN_ADDR=127.0.0.1:18500 INTERNAL_LISTEN_ADDR=127.0.0.1:18510 RUST_LOG=warn \
      "$bin" >/dev/null 2>&1 &
    pid=$!
    until curl -sf http://127.0.0.1:18500/health/ready >/dev/null; do sleep 0.1; done
    sleep 6 # search merges its segments after ready
    line="$label round $round:"
    for route in list word typo two; do
      rps=$(WRK_PATHS="$work/$route" wrk -t2 -c64 -d5s -s bench/scale.lua -H 'X-Api-Version: v1.0' \
        http://127.0.0.1:18500 | awk '/Requests\/sec/ {print $2}')
      line="$line $route $rps"
    done
    echo "$line"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  done
done
