#!/usr/bin/env bash
# The catalog at retail scale, in one run: the release all-in-one binary
# with CATALOG_SIZE products (default 100000), rate limits off, against the
# floor (bench/floor: a bare axum JSON handler, and axum -> tonic on loopback
# -> JSON, both answering the same 20 list-view products, about 45 KB).
# Every route at 16, 64 and 256 connections; listings and searches vary per
# request (bench/scale.lua). Prints req/s, p50, p99, p99.9 and each route's
# throughput as a ratio of the hop floor's at the same connections; writes
# them to target/bench/scale-SIZE.json with time to ready, index build
# times and RSS (idle, under load). Customer routes run again on Redis when
# redis-server is installed.
# Customer routes run on a Redis Cluster too (six local redis-servers) when
# redis-cli is installed. Checkout open, payment and confirm (and the whole
# flow) run through bench/floor's `checkout` driver, against that driver's
# own floor. ROUTES=customer runs
# only the floors and the customer routes (for work on the write path);
# ROUTES=search the floors, the plain listing and the search routes;
# ROUTES=reads those and the filtered listing (bench/markets.sh);
# ROUTES=documents the floors, the listing whole and with one locale's
# strings (localeProjection), suggestions, the tree and typos.
# METRICS_DIR=<dir> keeps the Redis and cluster meshes' metrics after their
# routes (redis.prom, cluster.prom: each call's and store operation's
# histograms, the replica waits).
# STOREFRONT_BIN measures another build of the storefront binary (an
# older one, for a before/after; the floor is this tree's).
# Usage: bench/scale.sh [size] [duration per route, default 5s] [connections...]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000}
duration=${2:-5s}
shift $(( $# > 2 ? 2 : $# ))
conns=("$@")
[ ${#conns[@]} -gt 0 ] || conns=(16 64 256)
port=18181
floor_port=18182
redis_port=18183
out=target/bench
mkdir -p "$out"
json="$out/scale-$size.json"
work=$(mktemp -d)
pids=()
# Each process killed is waited for (5 s at most), so that a run right after
# this one finds the meshes' and the cluster's ports free: a node still
# closing made the next run's cluster fail to form.
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$work"
}
trap stop_all EXIT

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk" >&2
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
# One invocation, so both binaries share one feature resolution (no rebuild).
cargo build --release --quiet -p storefront -p storefront-bench --bin storefront --bin floor --bin checkout
only=${ROUTES:-all}
# Part of the routes, or another binary: not the figures the chart draws.
[ "$only" = all ] && [ -z "${STOREFRONT_BIN:-}" ] || json="$out/partial-scale-$size.json"

source bench/common.sh
bench_limits_off
rss() { echo $(( $(awk '/VmRSS/ {print $2}' "/proc/$1/status") / 1024 )); }
now_ms() { date +%s%3N; }
# Connections the machine's listeners dropped with their accept queue full
# (each client then waits a second to retry, which wrk's latency, timed
# from the request's first byte, does not show): whole-machine, from nstat.
overflows() { nstat -asz TcpExtListenOverflows 2>/dev/null | awk '/ListenOverflows/ {print $2}' || true; }

# start_mesh PORT [VAR=value...]: prints "pid ready_ms".
start_mesh() {
  local p=$1; shift
  local t0; t0=$(now_ms)
  env CATALOG_SIZE="$size" LISTEN_ADDR=127.0.0.1:$p INTERNAL_LISTEN_ADDR=127.0.0.1:$((p + 10)) \
    RUST_LOG=info "$@" "${STOREFRONT_BIN:-./target/release/storefront}" >"$work/mesh-$p.log" 2>&1 &
  local pid=$!
  until curl -sf "http://127.0.0.1:$p/health/ready" >/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "the mesh stopped; log: $work/mesh-$p.log" >&2; cat "$work/mesh-$p.log" >&2; exit 1; }
    sleep 0.02
  done
  echo "$pid $(( $(now_ms) - t0 ))"
}

./target/release/floor 127.0.0.1:$floor_port &
pids+=($!)
read -r mesh ready_ms < <(start_mesh $port)
# start_mesh ran in a subshell: its pid must be recorded here to be stopped.
pids+=("$mesh")
# Idle: once the memory freed by the start-up builds has gone back to the
# system (it takes tens of seconds): read every 5 s until two reads agree
# within 2%, at most 90 s.
idle_rss=$(rss "$mesh")
for _ in $(seq 1 18); do
  sleep 5
  next=$(rss "$mesh")
  settled=$(( next * 50 >= idle_rss * 49 && next * 50 <= idle_rss * 51 ))
  idle_rss=$next
  [ "$settled" -eq 1 ] && break
done
# logged_ms MESSAGE: the elapsed_ms of the first log line with that message
# (a line's fields are in any order).
logged_ms() {
  { grep -a -m1 "\"message\":\"$1\"" "$work/mesh-$port.log" || true; } | grep -o '"elapsed_ms":[0-9]*' | cut -d: -f2 || true
}
catalog_ms=$(logged_ms "catalog built and indexed")
search_ms=$(logged_ms "search index built")
base="http://127.0.0.1:$port"
H=(-H 'X-Api-Version: v1.0')

# Request lists: a fixed pseudo-random mix, the same on every run.
RANDOM=42
sorts=(name:asc price:desc price:asc createdAt:desc popularity:desc brand:asc)
brands=("Southern%20Cross" "Kiwi%20%26%20Co" "Harbour%20Lane" "Outback%20Supply" "Tasman%20Threads" "Bondi%20Basics" "Aoraki" "Fern%20%26%20Flint")
words=(shirt dress jeans boots sneaker scarf jacket throw mug vase linen wool cotton leather classic premium)
typos=(shrit dresss jaens bots sneakr scraf jackte thorw linnen wol cottn lether clasic premum)
mapfile -t cats < <(curl -sf "${H[@]}" "$base/categories?limit=100" | grep -o '"id":"[0-9a-f-]\{36\}"' | cut -d'"' -f4)
for i in $(seq 0 499); do
  echo "/products?limit=20&offset=$(( RANDOM % 50 * 20 ))&sort=${sorts[RANDOM % ${#sorts[@]}]}"
done >"$work/list"
for i in $(seq 0 499); do
  echo "/products?limit=20&brand=${brands[RANDOM % ${#brands[@]}]}&inStock=true&category=${cats[RANDOM % ${#cats[@]}]}&sort=price:desc&sort=name:asc"
done >"$work/filtered"
for i in $(seq 0 499); do
  echo "/products?limit=20&offset=$(( 5000 + RANDOM % 250 * 20 ))&sort=${sorts[RANDOM % ${#sorts[@]}]}"
done >"$work/deep"
for i in $(seq 0 499); do echo "/search?query=${words[RANDOM % ${#words[@]}]}&limit=20"; done >"$work/word"
for i in $(seq 0 499); do echo "/search?query=${typos[RANDOM % ${#typos[@]}]}&limit=20"; done >"$work/typo"
for i in $(seq 0 499); do
  echo "/search?query=${words[RANDOM % ${#words[@]}]}%20${words[RANDOM % ${#words[@]}]}&limit=20"
done >"$work/two"
for i in $(seq 0 499); do w=${words[RANDOM % ${#words[@]}]}; echo "/search/suggestions?query=${w:0:$(( 2 + RANDOM % 3 ))}"; done >"$work/suggest"
# Products with stock for the cart routes, and ids for product detail.
mapfile -t ids < <(stocked "$base")
for i in $(seq 0 499); do echo "/products/${ids[RANDOM % ${#ids[@]}]}"; done >"$work/detail"
printf '%s\n' "${ids[@]}" >"$work/stocked"
sed 's/$/\&localeProjection=de-DE/' "$work/list" >"$work/list-de"
echo "/categories/tree" >"$work/tree"
if [ "$only" = documents ] || [ "$only" = all ]; then
  # Mean bytes of a listing page (the first 50 of the list), with every
  # locale's strings and with one locale's.
  page_bytes() {
    local n=0 u
    while read -r u; do n=$(( n + $(curl -sf "${H[@]}" "$base$u" | wc -c) )); done < <(head -50 "$1")
    echo $(( n / 50 ))
  }
  echo "listing page bytes: every locale $(page_bytes "$work/list"), localeProjection=de-DE $(page_bytes "$work/list-de")" >&2
fi
echo "/json" >"$work/json"
echo "/hop" >"$work/hop"

# customer PORT: a logged-in customer with 16 carts; writes the token and
# the line-add and cart-read request lists for that mesh.
customer() {
  # Its loop variables are its own: `routes` calls it with a `c` of its own.
  local b="http://127.0.0.1:$1" tag=$1 email="bench-$1-$RANDOM@example.com" c i
  curl -sf "${H[@]}" -H 'Content-Type: application/json' \
    -d "{\"emailAddress\":\"$email\",\"password\":\"bench password 1\",\"firstName\":\"B\",\"lastName\":\"M\",\"gRecaptchaResponse\":\"dev\"}" \
    "$b/customers" >/dev/null
  curl -sf "${H[@]}" -H 'Content-Type: application/json' \
    -d "{\"emailAddress\":\"$email\",\"password\":\"bench password 1\",\"gRecaptchaResponse\":\"dev\"}" \
    "$b/auth/login" | grep -o '"accessToken":"[^"]*"' | cut -d'"' -f4 >"$work/token-$tag"
  local token; token=$(cat "$work/token-$tag")
  : >"$work/add-$tag"; : >"$work/cart-$tag"; : >"$work/body-$tag"
  # 16 carts x 100 products each (a cart's line cap; stock >= 40 each): a
  # line grows by one every ~1,600 adds, so no add meets a limit. The list
  # takes the carts in turn, so concurrent adds spread over the carts as
  # shoppers' do (before, it took each cart's 100 lines in a row, and all
  # 64 connections queued on one or two carts).
  local carts=()
  for c in $(seq 1 16); do
    carts+=("$(curl -sf -X POST "${H[@]}" -H "X-BFF-Token: $token" "$b/carts" | grep -o '"id":"[0-9a-f-]\{36\}"' | head -1 | cut -d'"' -f4)")
    echo "/carts/${carts[c - 1]}" >>"$work/cart-$tag"
  done
  for i in $(seq 0 99); do
    for c in $(seq 1 16); do
      echo "/carts/${carts[c - 1]}/line-items" >>"$work/add-$tag"
      echo "{\"productId\":\"${ids[(c * 7 + i) % ${#ids[@]}]}\",\"variantId\":1,\"quantity\":1}" >>"$work/body-$tag"
    done
  done
  echo "/customers/me" >"$work/me-$tag"
}

# keep_metrics ADDR NAME: with METRICS_DIR set, a mesh's metrics after its
# routes (each call's and store operation's histograms, by method and op:
# where a store's time went) as METRICS_DIR/NAME.prom.
keep_metrics() {
  [ -z "${METRICS_DIR:-}" ] || { mkdir -p "$METRICS_DIR"; curl -sf "http://$1/metrics" >"$METRICS_DIR/$2.prom" || true; }
}

results=()
# measure NAME LIST CONNS [extra wrk args...]: one wrk run; appends a result.
measure() {
  local name=$1 list=$2 c=$3; shift 3
  local line dropped; dropped=$(overflows)
  line=$(WRK_PATHS="$list" wrk -t2 -c"$c" -d"$duration" "${H[@]}" -s bench/scale.lua "$@" | grep '^RESULT' || true)
  dropped=$(( $(overflows) - ${dropped:-0} ))
  [ "$dropped" -le 0 ] || echo "$name: $dropped connections dropped by a full accept queue (retried after 1 s)" >&2
  read -r _ rps p50 p99 p999 errors <<<"${line:-RESULT 0 0 0 0 0}"
  results+=("$name $c $rps $p50 $p99 $p999 $errors")
  printf '%-34s c=%-3s %9s req/s  p50 %7s us  p99 %7s us  p99.9 %7s us  errors %s\n' \
    "$name" "$c" "$rps" "$p50" "$p99" "$p999" "$errors" >&2
}

routes() { # PORT LABEL CONNS: the customer routes of one mesh
  local p=$1 label=$2 c=$3
  # A new customer and carts at every level: the lines' stock (>= 40) is
  # never what refuses an add, however many adds the levels before made.
  customer "$p"
  local token; token=$(cat "$work/token-$p")
  measure "customers/me ($label)" "$work/me-$p" "$c" -H "X-BFF-Token: $token" "http://127.0.0.1:$p"
  WRK_METHOD=POST WRK_BODIES="$work/body-$p" measure "cart line add ($label)" "$work/add-$p" "$c" \
    -H "X-BFF-Token: $token" -H 'Content-Type: application/json' "http://127.0.0.1:$p"
  measure "cart read ($label)" "$work/cart-$p" "$c" -H "X-BFF-Token: $token" "http://127.0.0.1:$p"
  checkout "http://127.0.0.1:$p" "$label" "$c"
}

# checkout BASE LABEL CONNS: open, payment, confirm and the whole flow by the
# checkout driver, with the driver's own floor (its rows are compared with
# that one).
checkout() {
  local out dropped; dropped=$(overflows)
  out=$(./target/release/checkout "$1" "http://127.0.0.1:$floor_port/hop" "$work/stocked" "${duration%s}" "$3" 2>"$work/checkout.err") \
    || { echo "checkout driver failed:" >&2; grep -v '^ ' "$work/checkout.err" | tail -5 >&2; return 0; }
  while read -r _ rest; do
    local name=${rest% * * * * *} figures=${rest##"${rest% * * * * *}" }
    [[ $name == driver* ]] || name="$name ($2)"
    results+=("$name $3 $figures")
    printf '%-34s c=%-3s %s\n' "$name" "$3" "$figures" >&2
  done < <(grep '^RESULT' <<<"$out")
  dropped=$(( $(overflows) - ${dropped:-0} ))
  [ "$dropped" -le 0 ] || echo "checkout ($2): $dropped connections dropped by a full accept queue (retried after 1 s)" >&2
}

peak_rss=0
for c in "${conns[@]}"; do
  measure "floor: bare axum JSON" "$work/json" "$c" "http://127.0.0.1:$floor_port"
  measure "floor: axum -> tonic -> JSON" "$work/hop" "$c" "http://127.0.0.1:$floor_port"
  [ "$only" = customer ] || measure "/products?limit=20" "$work/list" "$c" "$base"
  if [ "$only" = documents ]; then
    measure "/products?limit=20 localeProjection" "$work/list-de" "$c" "$base"
    measure "/search typo" "$work/typo" "$c" "$base"
    measure "/search/suggestions" "$work/suggest" "$c" "$base"
    measure "/categories/tree" "$work/tree" "$c" "$base"
  fi
  if [ "$only" = all ]; then
    measure "/products/{id}" "$work/detail" "$c" "$base"
  fi
  if [ "$only" = all ] || [ "$only" = reads ]; then
    measure "/products filtered+sorted" "$work/filtered" "$c" "$base"
  fi
  if [ "$only" = all ]; then
    measure "/products deep page (offset>=5000)" "$work/deep" "$c" "$base"
  fi
  if [ "$only" != customer ] && [ "$only" != documents ]; then
    measure "/search one word" "$work/word" "$c" "$base"
    measure "/search typo" "$work/typo" "$c" "$base"
    measure "/search two words" "$work/two" "$c" "$base"
  fi
  if [ "$only" = all ]; then
    measure "/search/suggestions" "$work/suggest" "$c" "$base"
    measure "/categories/tree" "$work/tree" "$c" "$base"
    measure "/products?limit=20 localeProjection" "$work/list-de" "$c" "$base"
  fi
  [ "$only" = search ] || [ "$only" = reads ] || [ "$only" = documents ] || routes $port memory "$c"
  r=$(rss "$mesh"); [ "$r" -gt "$peak_rss" ] && peak_rss=$r
done

redis_note="redis-server not installed: customer routes on Redis skipped"
if [ "$only" = search ] || [ "$only" = reads ] || [ "$only" = documents ]; then
  redis_note="ROUTES=$only: customer routes skipped"
elif command -v redis-server >/dev/null 2>&1; then
  redis-server --port $redis_port --save '' --appendonly no --daemonize no >/dev/null 2>&1 &
  pids+=($!)
  sleep 0.5
  read -r redis_mesh _ < <(start_mesh $((port + 100)) REDIS_URL=redis://127.0.0.1:$redis_port/ \
    METRICS_LISTEN_ADDR=127.0.0.1:$((port + 199)))
  pids+=("$redis_mesh")
  for c in "${conns[@]}"; do
    routes $((port + 100)) redis "$c"
  done
  keep_metrics 127.0.0.1:$((port + 199)) redis
  redis_note=""
  # The same routes on a Redis Cluster: three primaries, each with a
  # replica (writes wait for one replica's acknowledgement, as in
  # production), ports 18300-18305 and their bus ports +10000.
  if command -v redis-cli >/dev/null 2>&1; then
    cluster_up 18300 "$work/cluster"
    cluster_metrics=127.0.0.1:$((port + 299))
    read -r cluster_mesh _ < <(start_mesh $((port + 200)) REDIS_CLUSTER_NODES="$cluster_nodes" \
      METRICS_LISTEN_ADDR=$cluster_metrics)
    pids+=("$cluster_mesh")
    for c in "${conns[@]}"; do
      routes $((port + 200)) "redis cluster" "$c"
    done
    keep_metrics "$cluster_metrics" cluster
    # The writes' replica waits (docs/state.md): a round past its 250 ms
    # bound holds up every write of its primary waiting behind it.
    cluster_waits=$(curl -sf "http://$cluster_metrics/metrics" | awk '
      /^redis_replica_wait_rounds_total/ {rounds = $2}
      /^redis_replica_wait_writes_total/ {writes = $2}
      /^redis_replica_wait_late_total/ {late = $2}
      /^redis_replica_wait_round_seconds_bucket\{le="0.1"\}/ {fast = $2}
      /^redis_replica_wait_round_seconds_count/ {all = $2}
      END {printf "cluster replica waits: %d writes in %d rounds, %d rounds over 100 ms, %d past the 250 ms bound\n",
        writes, rounds, all - fast, late}')
  fi
fi

# The table and the JSON, ratios against the hop floor at the same connections.
{
  printf '{"size":%s,"duration":"%s","ready_ms":%s,"catalog_build_ms":%s,"search_index_ms":%s,"idle_rss_mb":%s,"loaded_rss_mb":%s,"routes":[' \
    "$size" "$duration" "$ready_ms" "${catalog_ms:-null}" "${search_ms:-null}" "$idle_rss" "$peak_rss"
  first=1
  # Checkout rows against the driver floor measured just before them (one
  # per store and level); the first one for all of them was the memory run's.
  declare -A driver=()
  for r in "${results[@]}"; do
    read -r -a f <<<"$r"
    n=${#f[@]}; name="${f[*]:0:n-6}"
    if [[ $name == checkout* ]]; then
      hop=${driver[${f[n-6]}]:-}
    else
      hop=$(printf '%s\n' "${results[@]}" | awk -v c="${f[n-6]}" '/^floor: axum -> tonic/ && $(NF-5)==c {print $(NF-4); exit}')
    fi
    [[ $name == "driver floor: axum -> tonic" ]] && driver[${f[n-6]}]=${f[n-5]}
    [ $first = 1 ] || printf ','
    first=0
    printf '{"route":"%s","connections":%s,"rps":%s,"p50_us":%s,"p99_us":%s,"p999_us":%s,"errors":%s,"vs_hop":%s}' \
      "$name" "${f[n-6]}" "${f[n-5]}" "${f[n-4]}" "${f[n-3]}" "${f[n-2]}" "${f[n-1]}" \
      "$(awk -v a="${f[n-5]}" -v b="${hop:-0}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
  done
  printf ']}\n'
} >"$json"

echo
echo "CATALOG_SIZE=$size: ready after ${ready_ms} ms (catalog ${catalog_ms:-?} ms, search index ${search_ms:-?} ms); RSS idle ${idle_rss} MB, under load ${peak_rss} MB"
[ -z "$redis_note" ] || echo "$redis_note"
[ -z "${cluster_waits:-}" ] || echo "$cluster_waits"
printf '| route | conns | req/s | p50 ms | p99 ms | p99.9 ms | errors | x hop floor |\n|---|---|---|---|---|---|---|---|\n'
python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["routes"]:
    print(f"| {r['route']} | {r['connections']} | {r['rps']:,.0f} | {r['p50_us']/1000:.2f} | {r['p99_us']/1000:.2f} | {r['p999_us']/1000:.2f} | {r['errors']} | {r['vs_hop']:.2f} |")
PY
echo "written: $json"
# The chart of every size measured so far (bench/results/scale.svg is the
# one the README shows: copy the JSON there and redraw to update it).
# A partial run alone (another binary, part of the routes) has none to draw.
if compgen -G 'target/bench/scale-*.json' >/dev/null; then
  python3 bench/chart.py target/bench/scale-*.json >target/bench/scale.svg
  echo "drawn: target/bench/scale.svg"
fi
