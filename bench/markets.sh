#!/usr/bin/env bash
# Issue 46's benchmark: the reads a currency touches (listings, filtered and
# sorted listings, search) at SIZE products with 2 configured currencies (the
# demo's AU and NZ markets) and with 5 (the demo's four and a JPY market),
# each run against its own hop floor (bench/scale.sh, ROUTES=reads, 64
# connections), then each route's ratio with 5 over its ratio with 2. Also
# the time to ready and the RSS of each. Writes target/bench/markets-SIZE.json.
# Usage: bench/markets.sh [size, default 100000] [duration per route, default 5s]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100000}
duration=${2:-5s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import json, sys
demo = json.load(open("services/domain/src/markets/demo.json"))["markets"]
jp = {"id": "jp", "name": {"ja-JP": "日本"}, "currencies": [{"code": "JPY", "minorUnits": 0}],
      "countries": ["JP"], "locales": ["ja-JP"], "prices": "taxIncluded",
      "tax": {"name": "消費税", "rates": [{"country": "JP", "rate": 0.1}], "onShipping": True},
      "shipping": [{"id": "standard", "name": {"ja-JP": "通常配送"},
                    "prices": [{"currency": "JPY", "amount": 800}], "minDays": 2, "maxDays": 4}]}
two = [m for m in demo if m["id"] in ("au", "nz")]
for n, markets in ((2, two), (5, demo + [jp])):
    json.dump({"markets": markets}, open(f"{sys.argv[1]}/markets-{n}.json", "w"))
PY
for n in 2 5; do
  echo "== $n currencies" >&2
  MARKETS_FILE="$work/markets-$n.json" ROUTES=reads bench/scale.sh "$size" "$duration" 64 \
    >"$work/run-$n.txt"
  cp "target/bench/partial-scale-$size.json" "$work/scale-$n.json"
  tail -n 12 "$work/run-$n.txt" >&2
done
python3 - "$work" "$size" <<'PY'
import json, sys
work, size = sys.argv[1], sys.argv[2]
two, five = (json.load(open(f"{work}/scale-{n}.json")) for n in (2, 5))
by = lambda d: {r["route"]: r for r in d["routes"]}
a, b = by(two), by(five)
rows = []
print("| route | x hop, 2 currencies | x hop, 5 currencies | 5 / 2 | p99 ms 2 / 5 |")
print("|---|---|---|---|---|")
for route, r in b.items():
    if route.startswith("floor") or route not in a:
        continue
    ratio = r["vs_hop"] / a[route]["vs_hop"] if a[route]["vs_hop"] else 0
    rows.append({"route": route, "two": a[route]["vs_hop"], "five": r["vs_hop"], "five_over_two": round(ratio, 2)})
    print(f"| {route} | {a[route]['vs_hop']:.2f} | {r['vs_hop']:.2f} | {ratio:.2f} | {a[route]['p99_us']/1000:.1f} / {r['p99_us']/1000:.1f} |")
for key in ("ready_ms", "catalog_build_ms", "search_index_ms", "idle_rss_mb", "loaded_rss_mb"):
    print(f"{key}: 2 currencies {two[key]}, 5 currencies {five[key]}")
out = {"size": int(size), "routes": rows,
       **{f"{k}_{n}": d[k] for n, d in (("two", two), ("five", five)) for k in ("ready_ms", "idle_rss_mb", "loaded_rss_mb")}}
json.dump(out, open(f"target/bench/markets-{size}.json", "w"))
print(f"written: target/bench/markets-{size}.json")
PY
