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
# build's mean requests a second and its mesh's CPU time a request (from
# /proc), and new/old of each, per route and sitting. On a machine whose
# speed drifts from minute to minute this compares like with like (CPU a
# request most closely); the routes a change does not touch show the
# setup's own spread. ROUTES picks the routes (default "list word typo two";
# also "varied", listing pages of varied offsets and sorts, and "filtered",
# the scale benchmark's filtered and sorted listings); RUST_LOG=info serves
# with the access lines a deployment writes (default warn).
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
sorts=(name:asc price:desc price:asc createdAt:desc popularity:desc brand:asc)
for _ in $(seq 0 499); do
  echo "/products?limit=20&offset=$(( RANDOM % 50 * 20 ))&sort=${sorts[RANDOM % ${#sorts[@]}]}"
done >"$work/varied"
export RATE_LIMIT_IP=off RATE_LIMIT_SESSION=off RATE_LIMIT_SEARCH=off
log=${RUST_LOG:-warn}
# filtered PORT: the filtered listings, on the categories a served mesh has.
filtered() {
  local brands=("Southern%20Cross" "Kiwi%20%26%20Co" "Harbour%20Lane" "Outback%20Supply" "Tasman%20Threads" "Bondi%20Basics" "Aoraki" "Fern%20%26%20Flint")
  local cats
  mapfile -t cats < <(curl -sf -H 'X-Api-Version: v1.0' "http://127.0.0.1:$1/categories?limit=100" | grep -o '"id":"[0-9a-f-]\{36\}"' | cut -d'"' -f4)
  for _ in $(seq 0 499); do
    echo "/products?limit=20&brand=${brands[RANDOM % ${#brands[@]}]}&inStock=true&category=${cats[RANDOM % ${#cats[@]}]}&sort=price:desc&sort=name:asc"
  done >"$work/filtered"
}

# serve PORT BINARY: one mesh, waited for until ready; its pid in $pids.
pids=()
serve() {
  CATALOG_SIZE=$size LISTEN_ADDR=127.0.0.1:$1 INTERNAL_LISTEN_ADDR=127.0.0.1:$(($1 + 10)) RUST_LOG=$log \
    "$2" >/dev/null 2>&1 &
  pids+=($!)
  until curl -sf "http://127.0.0.1:$1/health/ready" >/dev/null; do sleep 0.1; done
}
# burst ROUTE PORT CONNS: requests a second of one 2 s burst.
burst() {
  WRK_PATHS="$work/$1" wrk -t1 -c"$3" -d2s -s bench/scale.lua -H 'X-Api-Version: v1.0' \
    "http://127.0.0.1:$2" | awk '/Requests\/sec/ {print $2}'
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# side ROUTE PORT PID CONNS: "req/s cpu_us_a_request" of one 2 s burst.
side() {
  local c0 c1 rps
  c0=$(cpu_ticks "$3")
  rps=$(burst "$1" "$2" "$4")
  c1=$(cpu_ticks "$3")
  awk -v r="$rps" -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%s %.1f\n", r, t * 1e6 / hz / (r * 2)}'
}
if [ "${SIDE:-}" = 1 ]; then
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
  for ports in "18500 18600" "18600 18500"; do
    read -r p_old p_new <<<"$ports"
    serve "$p_old" "$old"; serve "$p_new" "$new"
    pid_old=${pids[0]} pid_new=${pids[1]}
    [ -s "$work/filtered" ] || filtered "$p_old"
    sleep 8 # search merges its segments after ready
    for conns in 1 64; do
      for route in ${ROUTES:-list word typo two}; do
        for _ in $(seq 1 "$rounds"); do
          echo "$(side "$route" "$p_old" "$pid_old" "$conns") $(side "$route" "$p_new" "$pid_new" "$conns")"
        done | awk -v r="$route" -v c="$conns" -v p="$p_old/$p_new" '
          {ra += $1; ca += $2; rb += $3; cb += $4; n++}
          END {printf "ports %s, %2d conns, %-8s old %8.1f new %8.1f req/s  new/old %.3f | CPU a request old %6.0f new %6.0f us  new/old %.3f\n",
            p, c, r, ra / n, rb / n, rb / ra, ca / n, cb / n, cb / ca}'
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
