#!/usr/bin/env bash
# Two builds of the storefront binary against each other on checkout, in
# one sitting: both meshes served at once at SIZE products (default
# 100000), each on its own redis-server (STORE=memory: in memory;
# STORE=cluster: each on its own six-node Redis Cluster), and the
# scale benchmark's checkout driver (bench/floor/src/checkout.rs: open,
# payment, confirm, SECONDS a phase at WORKERS shoppers) run against one
# then the other, ROUNDS times each, the order swapped every round. Prints
# each run's throughput a phase, the mesh's CPU a session in each phase
# (from /proc, the driver's MESH_PID) and its Redis's CPU a session (a cluster's six servers)
# over the whole run (carts and cancels included); then each build's
# means and new/old. The machine's speed drifts from minute to minute:
# CPU a session compares like with like, throughput less closely.
# Usage: bench/checkout_ab.sh OLD_BINARY NEW_BINARY [size] [rounds, 3] [seconds, 3] [workers, 32]
# (make OLD_BINARY from a worktree with its own CARGO_TARGET_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 size=${3:-100000} rounds=${4:-3} seconds=${5:-3} workers=${6:-32}
store=${STORE:-redis}
# As bench/scale.sh builds them: one feature resolution, no rebuild between the two.
cargo build --release --quiet -p storefront -p storefront-bench --bin storefront --bin floor --bin checkout
if [ "$store" != memory ] && ! command -v redis-server >/dev/null; then
  echo "redis-server is required (apt-get install redis-server), or STORE=memory" >&2
  exit 1
fi
source bench/common.sh
bench_session
# As bench/scale.sh: rate limits off, hold limits out of reach.
bench_limits_off
floor_port=18499
floor_up $floor_port

# serve NAME PORT BINARY: a mesh (and its redis-server) ready, with the
# products the driver buys; sets mesh_NAME and redis_NAME (pids).
serve() {
  local name=$1 port=$2 bin=$3 redis_pid=0 env=()
  if [ "$store" = redis ]; then
    redis_up $((port + 83))
    env=(REDIS_URL=redis://127.0.0.1:$((port + 83))/)
  elif [ "$store" = cluster ]; then
    cluster_up $((port + 200)) "$work/cluster-$name"
    env=(REDIS_CLUSTER_NODES="$cluster_nodes")
    redis_pid="${cluster_pids[*]}"
  fi
  env CATALOG_SIZE="$size" LISTEN_ADDR=127.0.0.1:$port INTERNAL_LISTEN_ADDR=127.0.0.1:$((port + 10)) \
    RUST_LOG=info "${env[@]}" "$bin" >"$work/mesh-$name.log" 2>&1 &
  local mesh_pid=$!
  pids+=("$mesh_pid")
  until curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null; do
    kill -0 "$mesh_pid" 2>/dev/null || { echo "the $name mesh stopped:" >&2; cat "$work/mesh-$name.log" >&2; exit 1; }
    sleep 0.1
  done
  stocked "http://127.0.0.1:$port" >"$work/stocked-$name"
  printf -v "mesh_$name" %s "$mesh_pid"
  printf -v "redis_$name" %s "$redis_pid"
}
# ticks PID...: their CPU so far (0 for none).
ticks() {
  local p sum=0
  for p in "$@"; do [ "$p" = 0 ] || sum=$((sum + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
  echo $sum
}

serve old 18500 "$old"
serve new 18600 "$new"
sleep 8 # search merges its segments after ready
hz=$(getconf CLK_TCK)
# run NAME PORT: one driver run; prints "NAME open pay confirm flow
# cpu_open cpu_pay cpu_confirm redis_cpu errors".
run() {
  local name=$1 port=$2 mesh redis r0 r1 out
  mesh=mesh_$name redis=redis_$name
  # shellcheck disable=SC2086 # a cluster's pids, one word each
  r0=$(ticks ${!redis})
  out=$(MESH_PID=${!mesh} ./target/release/checkout "http://127.0.0.1:$port" \
    "http://127.0.0.1:$floor_port/hop" "$work/stocked-$name" "$seconds" "$workers" 2>"$work/err")
  # shellcheck disable=SC2086
  r1=$(ticks ${!redis})
  { echo "$out"; grep -a '^MESH CPU' "$work/err"; } | awk -v n="$name" -v r=$((r1 - r0)) -v hz="$hz" '
    /^RESULT checkout/ {rps[$3] = $4; errors += $8}
    /^MESH CPU sessions/ {sessions = $4}
    /^MESH CPU (open|payment|confirm):/ {sub(":", "", $3); cpu[$3] = $4}
    END {printf "%s %.1f %.1f %.1f %.1f %d %d %d %.0f %d\n", n, rps["open"], rps["payment"], rps["confirm"],
      rps["flow"], cpu["open"], cpu["payment"], cpu["confirm"], r * 1e6 / hz / (sessions ? sessions : 1), errors}'
}
for round in $(seq 1 "$rounds"); do
  if (( round % 2 )); then run old 18500; run new 18600; else run new 18600; run old 18500; fi
done | tee "$work/runs" | awk '{printf "%-3s req/s open %7.1f payment %7.1f confirm %7.1f flow %6.1f | CPU a session open %5d payment %5d confirm %5d us, redis-server %5d us | errors %d\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}'
awk '
  {n[$1]++; for (i = 2; i <= 10; i++) s[$1, i] += $i}
  END {
    split("open payment confirm flow", names, " ")
    for (i = 2; i <= 5; i++) printf "%-8s req/s old %7.1f new %7.1f new/old %.3f\n", names[i - 1], s["old", i] / n["old"], s["new", i] / n["new"], (s["new", i] / n["new"]) / (s["old", i] / n["old"])
    split("open payment confirm redis-server", cpus, " ")
    for (i = 6; i <= 9; i++) if (s["old", i] > 0) printf "%-12s CPU a session old %6.0f new %6.0f us new/old %.3f\n", cpus[i - 5], s["old", i] / n["old"], s["new", i] / n["new"], (s["new", i] / n["new"]) / (s["old", i] / n["old"])
    printf "errors old %d new %d\n", s["old", 10], s["new", 10]
  }' "$work/runs"
