#!/usr/bin/env bash
# Two builds of the storefront binary against each other on search, in
# one sitting: each started alone at SIZE products (default 100000), then
# listings, one word, typo and two-word searches (the scale benchmark's
# word lists) for 5 s each at 64 connections; ROUNDS times (default 2),
# alternating. Prints requests per second per route and binary.
# Usage: bench/search_ab.sh OLD_BINARY NEW_BINARY [size] [rounds]
# (make OLD_BINARY from a worktree with its own CARGO_TARGET_DIR: workspace
# crates' artifacts are named alike whatever their path).
# SIDE=1: both builds served at once (two meshes on two ports), each route
# measured in 2 s bursts alternating between them, ROUNDS bursts each, at
# one connection and at 64, then again with the ports swapped; prints each
# build's mean and new/old per route and sitting. On a machine whose speed
# drifts from minute to minute this compares like with like; the routes a
# change does not touch show the setup's own spread.
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

# serve PORT BINARY: one mesh, waited for until ready; its pid in $pids.
pids=()
serve() {
  CATALOG_SIZE=$size LISTEN_ADDR=127.0.0.1:$1 INTERNAL_LISTEN_ADDR=127.0.0.1:$(($1 + 10)) RUST_LOG=warn \
    "$2" >/dev/null 2>&1 &
  pids+=($!)
  until curl -sf "http://127.0.0.1:$1/health/ready" >/dev/null; do sleep 0.1; done
}
# burst ROUTE PORT CONNS: requests a second of one 2 s burst.
burst() {
  WRK_PATHS="$work/$1" wrk -t1 -c"$3" -d2s -s bench/scale.lua -H 'X-Api-Version: v1.0' \
    "http://127.0.0.1:$2" | awk '/Requests\/sec/ {print $2}'
}
if [ "${SIDE:-}" = 1 ]; then
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
  for ports in "18500 18600" "18600 18500"; do
    read -r p_old p_new <<<"$ports"
    serve "$p_old" "$old"; serve "$p_new" "$new"
    sleep 8 # search merges its segments after ready
    for conns in 1 64; do
      for route in list word typo two; do
        a=0; b=0
        for _ in $(seq 1 "$rounds"); do
          a=$(awk -v s="$a" -v n="$(burst "$route" "$p_old" "$conns")" 'BEGIN {print s + n}')
          b=$(awk -v s="$b" -v n="$(burst "$route" "$p_new" "$conns")" 'BEGIN {print s + n}')
        done
        awk -v r="$route" -v c="$conns" -v a="$a" -v b="$b" -v n="$rounds" -v p="$p_old/$p_new" \
          'BEGIN { printf "ports %s, %2d conns, %-4s old %8.1f new %8.1f req/s  new/old %.3f\n", p, c, r, a / n, b / n, b / a }'
      done
    done
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
    pids=()
  done
  exit 0
fi

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
