#!/usr/bin/env bash
# The catalog changing under load (issue 26), in one run of the release
# all-in-one binary on a feed of SIZE products (default 100000) made by
# `storefront catalog export`:
#  1. an import of a whole new feed (every product's brand changed) through
#     POST /internal/catalog/import while wrk lists products at 64
#     connections: failed requests, listing throughput during the import as
#     a ratio of before, and answers mixing the two catalogs (bench/
#     versions.lua reads every answer);
#  2. STOCK stock changes and PRICES price changes a second for SECONDS
#     (bench/floor/src/changes.rs) while wrk drives /products and /search
#     together (32 connections each, 64 in all): each route's throughput as
#     a ratio of the same load without changes (10 s before the changes and
#     10 s after them, averaged: this machine's speed drifts by the minute),
#     and the delay from a price change's answer to search finding the
#     product.
# Writes target/bench/catalog-changes-SIZE.json and prints a table.
# STOREFRONT_BIN measures another build of the mesh (feeds, token and the
# change generator stay this tree's). FEED=<export of SIZE products> uses
# that feed rather than exporting one (at 1,000,000 an export takes
# minutes); IMPORT=off leaves out the import (1.), for the changes alone;
# SETTLE=<seconds> waits that long after ready.
# Usage: bench/catalog_changes.sh [size] [seconds, default 30] [stock/s, 200] [prices/s, 20]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000}
seconds=${2:-30}
stock_rate=${3:-200}
price_rate=${4:-20}
port=18281
internal=18291
base="http://127.0.0.1:$port"
out=target/bench
mkdir -p "$out"
json="$out/catalog-changes-$size.json"
source bench/common.sh
bench_session

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk" >&2
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
cargo build --release --quiet -p storefront -p storefront-bench --bin storefront --bin changes
if [ -n "${FEED:-}" ]; then
  ln -s "$(realpath "$FEED")" "$work/a.ndjson"
else
  ./target/release/storefront catalog export --size "$size" >"$work/a.ndjson"
fi
sed '/"type":"product"/ s/"brand":"/"brand":"B2 /' "$work/a.ndjson" >"$work/b.ndjson"

export RATE_LIMIT_IP=off RATE_LIMIT_SESSION=off RATE_LIMIT_SEARCH=off RATE_LIMIT_SERVICE=off
start $port CATALOG_FEED="$work/a.ndjson" INTERNAL_LISTEN_ADDR=127.0.0.1:$internal
# A million products take about a minute to be ready (start waits 20 s).
for _ in $(seq 1 600); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.5; done
curl -sf "$base/health/ready" >/dev/null || { echo "the mesh did not become ready" >&2; exit 1; }
# SETTLE=<seconds>: let the work after ready (search's merge) end first.
sleep "${SETTLE:-0}"
# The mesh's dev issuer is on its fixed port unless something else holds it.
token=$(./target/release/storefront token merchandising@storefront.iam.gserviceaccount.com)
H=(-H 'X-Api-Version: v1.0')

RANDOM=42
sorts=(name:asc price:desc price:asc createdAt:desc popularity:desc brand:asc)
words=(shirt dress jeans boots sneaker scarf jacket throw mug vase linen wool cotton leather classic premium)
for _ in $(seq 0 499); do
  echo "/products?limit=20&offset=$(( RANDOM % 50 * 20 ))&sort=${sorts[RANDOM % ${#sorts[@]}]}"
done >"$work/list"
for _ in $(seq 0 499); do echo "/search?query=${words[RANDOM % ${#words[@]}]}&limit=20"; done >"$work/search"

# load SCRIPT LIST CONNS SECONDS: one wrk run; prints its RESULT line.
load() {
  WRK_PATHS="$2" wrk -t1 -c"$3" -d"$4s" "${H[@]}" -s "bench/$1" "$base" | grep '^RESULT' || echo "RESULT 0 0 0 0 0 0"
}
field() { awk -v n="$2" '{print $n}' <<<"$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
now_ms() { date +%s%3N; }

# 1. An import under load.
import_json=null
if [ "${IMPORT:-on}" != off ]; then
before=$(load versions.lua "$work/list" 64 10)
t0=$(now_ms)
dry=$(curl -s -X POST -H "Authorization: Bearer $token" --data-binary @"$work/b.ndjson" \
  "http://127.0.0.1:$internal/internal/catalog/import?dryRun=true")
dry_ms=$(( $(now_ms) - t0 ))
grep -q '"toUpdate"' <<<"$dry" || { echo "dry run failed: ${dry:0:300}" >&2; exit 1; }
# Listings run from well before to well after the import; the throughput
# during it comes from the per-second counts of answers (versions.lua).
window=$(( dry_ms * 4 / 1000 + 8 ))
WRK_BUCKETS=1 WRK_PATHS="$work/list" wrk -t1 -c64 -d"${window}s" "${H[@]}" -s bench/versions.lua "$base" \
  >"$work/during" &
wrk_pid=$!
sleep 2
import_start=$(now_ms)
status=$(curl -s -o "$work/import.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $token" \
  --data-binary @"$work/b.ndjson" "http://127.0.0.1:$internal/internal/catalog/import")
import_end=$(now_ms)
wait $wrk_pid
[ "$status" = 200 ] || { echo "import answered $status: $(head -c 300 "$work/import.json")" >&2; exit 1; }
during=$(grep '^RESULT' "$work/during")
# Whole seconds inside the import only (the seconds it touches when it
# took less than two).
during_rps=$(awk -v s="$import_start" -v e="$import_end" '
  $1 == "BUCKET" && $2 * 1000 >= s && ($2 + 1) * 1000 <= e { n += $3; k++ }
  $1 == "BUCKET" && ($2 + 1) * 1000 > s && $2 * 1000 < e { m += $3; j++ }
  END { printf "%.1f", (k > 0 ? n / k : (j > 0 ? m / j : 0)) }' "$work/during")
brands_now=$(curl -sf "${H[@]}" "$base/products?limit=20" | grep -o '"brand":"B2 ' | wc -l)
import_json="{\"dry_run_ms\":$dry_ms,\"import_ms\":$((import_end - import_start)),
   \"list_rps_before\":$(field "$before" 2),\"list_rps_during\":$during_rps,
   \"ratio\":$(ratio "$during_rps" "$(field "$before" 2)"),
   \"errors\":$(( $(field "$before" 6) + $(field "$during" 6) )),\"mixed_answers\":$(field "$during" 7),
   \"new_brands_on_first_page_after\":$brands_now}"
fi

# 2. Stock and price changes under load.
changes_load() { # SECONDS LABEL
  load scale.lua "$work/list" 32 "$1" >"$work/list-$2" &
  local a=$!
  load scale.lua "$work/search" 32 "$1" >"$work/search-$2" &
  local b=$!
  wait $a $b
}
changes_load 10 quiet
# The change generator stands for a shop system on another machine: it
# runs at low priority so that its own work takes as little as possible
# from the mesh and wrk (the changes it sends are the load measured).
# Its products are the catalog's as held (the imported feed, or without the
# import the first): a price change moves prices and a name, not a brand.
held="$work/b.ndjson"
[ "${IMPORT:-on}" != off ] || held="$work/a.ndjson"
CHANGES_READY="$work/sending" nice -n 10 ./target/release/changes "$held" "http://127.0.0.1:$internal" "$base" "$token" \
  "$seconds" "$stock_rate" "$price_rate" >"$work/changes.json" 2>"$work/changes.err" &
changes_pid=$!
# wrk's window starts with the changes, not while the driver reads its feed
# (about 2 s under load, a tenth of the window without changes before).
for _ in $(seq 1 600); do [ -e "$work/sending" ] && break; sleep 0.1; done
changes_load "$seconds" busy
wait $changes_pid
# Why a change failed (the first few), where the run's figures say one did.
[ -s "$work/changes.err" ] && { echo "the change driver said:" >&2; head -5 "$work/changes.err" >&2; }
changes_load 10 after
mean() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (a + b) / 2 }'; }
before_list=$(field "$(cat "$work/list-quiet")" 2); after_list=$(field "$(cat "$work/list-after")" 2)
before_search=$(field "$(cat "$work/search-quiet")" 2); after_search=$(field "$(cat "$work/search-after")" 2)
quiet_list=$(mean "$before_list" "$after_list"); busy_list=$(field "$(cat "$work/list-busy")" 2)
quiet_search=$(mean "$before_search" "$after_search"); busy_search=$(field "$(cat "$work/search-busy")" 2)

cat >"$json" <<EOF
{"size":$size,
 "import":$import_json,
 "changes":{"seconds":$seconds,"stock_per_s":$stock_rate,"prices_per_s":$price_rate,
   "list_rps_quiet":$quiet_list,"list_rps_before":$before_list,"list_rps_after":$after_list,"list_rps_busy":$busy_list,"list_ratio":$(ratio "$busy_list" "$quiet_list"),
   "search_rps_quiet":$quiet_search,"search_rps_before":$before_search,"search_rps_after":$after_search,"search_rps_busy":$busy_search,"search_ratio":$(ratio "$busy_search" "$quiet_search"),
   "wrk_errors":$(( $(field "$(cat "$work/list-busy")" 6) + $(field "$(cat "$work/search-busy")" 6) )),
   "load":$(cat "$work/changes.json")}}
EOF
python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
i, c = d["import"], d["changes"]
l = c["load"]
print(f"{d['size']:,} products")
if i:
    print(f"import of the whole feed: dry run {i['dry_run_ms']:,} ms, import {i['import_ms']:,} ms under load")
    print(f"  /products at 64 conns: {i['list_rps_before']:,.0f} req/s before, {i['list_rps_during']:,.0f} during "
          f"({i['ratio']:.2f}x); failed requests {i['errors']}; answers mixing two catalogs {i['mixed_answers']}")
print(f"changes for {c['seconds']} s: {l['stock']['sent']} stock ({l['stock']['failed']} failed), "
      f"{l['prices']['sent']} price ({l['prices']['failed']} failed)")
print(f"  /products (32 conns): {c['list_rps_quiet']:,.0f} (before {c['list_rps_before']:,.0f}, after {c['list_rps_after']:,.0f})"
      f" -> {c['list_rps_busy']:,.0f} req/s ({c['list_ratio']:.2f}x)")
print(f"  /search (32 conns):   {c['search_rps_quiet']:,.0f} (before {c['search_rps_before']:,.0f}, after {c['search_rps_after']:,.0f})"
      f" -> {c['search_rps_busy']:,.0f} req/s ({c['search_ratio']:.2f}x); wrk errors {c['wrk_errors']}")
s = l["searchDelayMs"]
print(f"  price change -> found by search: p50 {s['p50']} ms, p99 {s['p99']} ms, max {s['max']} ms "
      f"({s['seen']} seen, {s['unseen']} not within 10 s)")
PY
echo "written: $json"
