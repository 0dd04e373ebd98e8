# Shared by the bench scripts (sourced): start a release mesh on a port and
# measure one route with wrk. Callers set `pids` and their EXIT trap.

# bench_session: a work directory (`work`, removed at exit) and the list
# of processes the script starts (`pids`, each killed at exit).
bench_session() {
  work=$(mktemp -d)
  pids=()
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
}

# need TOOL PACKAGE: stops the script, naming the Debian package, when
# TOOL is not installed.
need() {
  command -v "$1" >/dev/null || { echo "$1 is required (apt-get install $2)" >&2; exit 1; }
}

# floor_up PORT: bench/floor's servers on PORT (its pid added to `pids`).
floor_up() {
  ./target/release/floor "127.0.0.1:$1" >/dev/null 2>&1 &
  pids+=($!)
}

# start PORT [VAR=value...]: the all-in-one binary (STOREFRONT_BIN: another
# build of it, for a before/after), waited for until ready.
start() {
  local port=$1; shift
  env LISTEN_ADDR=127.0.0.1:$port RUST_LOG=warn "$@" "${STOREFRONT_BIN:-./target/release/storefront}" >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && return; sleep 0.2; done
}

# run NAME PORT: GET /products?limit=1 for $duration at 4 connections;
# prints a summary on stderr and the requests per second on stdout.
run() {
  local out; out=$(wrk --latency -t2 -c4 -d"$duration" -H 'X-Api-Version: v1.0' "http://127.0.0.1:$2/products?limit=1")
  local rps; rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  printf '%-22s %9s req/s  p50 %8s  p99 %8s\n' "$1" "$rps" "$(awk '$1=="50%" {print $2}' <<<"$out")" "$(awk '$1=="99%" {print $2}' <<<"$out")" >&2
  echo "$rps"
}

# The write benches' settings: rate limits off, and the hold limits out of
# reach of one network's load (docs/abuse-limits.md), so that the write
# path is measured, not the abuse limits (their ledgers are still written
# on every checkout).
bench_limits_off() {
  export RATE_LIMIT_IP=off RATE_LIMIT_SESSION=off RATE_LIMIT_SEARCH=off \
    RATE_LIMIT_LOGIN=off RATE_LIMIT_LOGIN_EMAIL=off RATE_LIMIT_SIGNUP=off RATE_LIMIT_LOGIN_ACCOUNT=off \
    RATE_LIMIT_CHECKOUT=off RATE_LIMIT_CHECKOUT_SESSION=off RATE_LIMIT_PASSWORD_CHANGE=off
  export HOLD_LIMIT_PER_VARIANT_CUSTOMER=1000000 HOLD_LIMIT_TOTAL_CUSTOMER=1000000 \
    HOLD_LIMIT_PER_VARIANT_NETWORK=1000000 HOLD_LIMIT_TOTAL_NETWORK=1000000
}

# stocked BASE_URL: the ids of the 300 most popular active products with
# 40 units or more, one a line (what the cart and checkout loads buy).
stocked() {
  for o in 0 100 200; do
    curl -sf -H 'X-Api-Version: v1.0' "$1/products?limit=100&offset=$o&inStock=true&status=active&sort=popularity:desc"
    echo
  done | python3 -c 'import json,sys; [print(p["id"]) for l in sys.stdin if l.strip() for p in json.loads(l)["results"] if p["masterVariant"]["availability"]["quantity"] >= 40]'
}

# redis_up PORT: a throwaway redis-server (no persistence) on PORT, its
# pid added to the caller's `pids` and set in `redis_pid`, waited for
# until it answers.
redis_up() {
  redis-server --port "$1" --save '' --appendonly no >/dev/null 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  until redis-cli -p "$1" ping >/dev/null 2>&1; do sleep 0.1; done
}

# cluster_up BASEPORT DIR: a throwaway Redis Cluster of six redis-servers on
# BASEPORT..BASEPORT+5 (and their bus ports +10000), three primaries each
# with a replica (writes wait for one, as in production), no persistence,
# its files in DIR; waited for until every node agrees it is up. Sets
# `cluster_nodes` (host:port,...) and `cluster_pids`; adds them to `pids`.
cluster_up() {
  local base=$1 dir=$2 nodes=() n p
  mkdir -p "$dir"
  cluster_pids=()
  for n in 0 1 2 3 4 5; do
    p=$((base + n))
    redis-server --port $p --bind 127.0.0.1 --cluster-enabled yes --cluster-node-timeout 2000 \
      --cluster-config-file "$dir/nodes-$p.conf" --dir "$dir" \
      --save '' --appendonly no --repl-diskless-sync-delay 0 >/dev/null 2>&1 &
    pids+=($!)
    cluster_pids+=($!)
    nodes+=("127.0.0.1:$p")
  done
  for n in "${nodes[@]}"; do until redis-cli -p "${n#*:}" ping >/dev/null 2>&1; do sleep 0.1; done; done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >/dev/null \
    || { echo "the Redis Cluster did not form (ports $base-$((base + 5)) held by another run?)" >&2; exit 1; }
  for n in "${nodes[@]}"; do
    until redis-cli -p "${n#*:}" cluster info | grep -q cluster_state:ok \
      && redis-cli -p "${n#*:}" info replication | grep -Eq 'role:master|master_link_status:up'; do sleep 0.2; done
  done
  cluster_nodes=$(IFS=,; echo "${nodes[*]}")
}

# medians FIELD: of lines "old<N> ..." and "new<N> ..." on stdin (each
# build's runs, as the instruction counts print them), each build's median
# of field FIELD with its range, and new over old: the medians' ratio and
# the range of every new run over every old one.
medians() {
  awk -v f="$1" '
    { build = substr($1, 1, 3); n[build]++; per[build, n[build]] = $f }
    function median(b,   i, j, t, v, k) {
      k = n[b]; for (i = 1; i <= k; i++) v[i] = per[b, i]
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      lo[b] = v[1]; hi[b] = v[k]
      return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
    }
    END {
      mo = median("old"); mn = median("new")
      printf "median: old %.0f (%.0f-%.0f), new %.0f (%.0f-%.0f)\n", mo, lo["old"], hi["old"], mn, lo["new"], hi["new"]
      printf "new/old %.4f (the medians; every new over every old %.4f-%.4f)\n", mn / mo, lo["new"] / hi["old"], hi["new"] / lo["old"]
    }'
}

# alternating ROUNDS OLD NEW: the caller's `count NAME BINARY` for each
# build ROUNDS times, alternating which goes first (old1 new1 new2 old2
# ...), so that neither build is always counted on a fresher machine.
alternating() {
  local round
  for round in $(seq 1 "$1"); do
    if [ $((round % 2)) -eq 1 ]; then
      count "old$round" "$2"
      count "new$round" "$3"
    else
      count "new$round" "$3"
      count "old$round" "$2"
    fi
  done
}

# inclusive NAME CALLGRIND_FILE [DIVISOR]: for each regex of INCLUSIVE
# ('regex;regex'), the first function it matches in callgrind_annotate's
# inclusive list: its instructions (over DIVISOR: a session's), on stderr.
inclusive() {
  [ -n "${INCLUSIVE:-}" ] || return 0
  local listed part parts
  listed=$(callgrind_annotate --inclusive=yes "$2" 2>/dev/null || true)
  IFS=';' read -ra parts <<<"$INCLUSIVE"
  for part in "${parts[@]}"; do
    awk -v re="$part" -v n="${3:-1}" -v name="$1" '$0 ~ re {gsub(",", "", $1)
      printf "%s part %s: %.0f\n", name, re, $1 / n; exit}' <<<"$listed" >&2
  done
}
