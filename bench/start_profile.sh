#!/usr/bin/env bash
# Where a start's time goes (issue 51's target 4): one start of the release
# all-in-one binary on a feed of SIZE products (made by `storefront catalog
# export` when missing), measured until /health/ready. Prints the time to
# ready, the CPU it took (user and system, from /proc), its minor page
# faults, how busy the cores were (the process's CPU over 0.5 s windows),
# and each phase as the programs log it: the catalog's build, search's feed
# and the rest of its build. With PERF=1 the start runs under `perf record
# -g` (99 Hz a core; a build with frame pointers gives whole stacks:
# RUSTFLAGS="-C force-frame-pointers=yes") and the samples are shared out by
# thread and by function.
# STOREFRONT_BIN starts another build (a before/after in one sitting).
# Usage: bench/start_profile.sh [size, 1000000] [feed file]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1000000}
source bench/common.sh
bench_session
feed=${2:-$work/feed.ndjson}
port=18393
cargo build --release --quiet -p storefront --bin storefront
[ -s "$feed" ] || ./target/release/storefront catalog export --size "$size" >"$feed"
bin=${STOREFRONT_BIN:-./target/release/storefront}
cmd=(env CATALOG_FEED="$feed" LISTEN_ADDR=127.0.0.1:$port INTERNAL_LISTEN_ADDR=127.0.0.1:$((port + 1))
  RUST_LOG=info MIMALLOC_PURGE_DELAY="${MIMALLOC_PURGE_DELAY:-10}" "$bin")
if [ -n "${PERF:-}" ]; then
  need perf linux-perf
  perf record -q -F 99 -g -o "$work/perf.data" -- "${cmd[@]}" >"$work/log" 2>&1 &
else
  "${cmd[@]}" >"$work/log" 2>&1 &
fi
pids+=($!)
hz=$(getconf CLK_TCK)
t0=$(date +%s%3N)
mesh=""
busy=()
last=""
# (A readiness probe waits up to a second while the catalog loads: each
# window is timed, not assumed.)
until curl -sf -m 2 "http://127.0.0.1:$port/health/ready" >/dev/null; do
  # The mesh itself (under perf, its child): the binary's own process.
  [ -n "$mesh" ] || mesh=$(pgrep -f "^$bin" | head -1 || true)
  sleep 0.5
  if [ -n "$mesh" ] && [ -r "/proc/$mesh/stat" ]; then
    now="$(awk '{print $14 + $15}' "/proc/$mesh/stat") $(date +%s%3N)"
    [ -z "$last" ] || busy+=("$(awk -v a="$last" -v b="$now" -v hz="$hz" 'BEGIN {
      split(a, x, " "); split(b, y, " "); printf "%.2f", (y[1] - x[1]) / hz / ((y[2] - x[2]) / 1000) }')")
    last=$now
  fi
  kill -0 "${pids[-1]}" 2>/dev/null || { echo "the mesh stopped:" >&2; tail -5 "$work/log" >&2; exit 1; }
done
ready=$(( $(date +%s%3N) - t0 ))
[ -n "$mesh" ] || mesh=${pids[-1]}
read -r utime stime minflt < <(awk '{print $14, $15, $10}' "/proc/$mesh/stat")
kill -INT "$mesh"
wait "${pids[-1]}" 2>/dev/null || true

# The last window ends at the probe that found the mesh ready: left out.
inner=()
[ ${#busy[@]} -lt 2 ] || inner=("${busy[@]:0:${#busy[@]}-1}")
cores=$(printf '%s\n' "${inner[@]}" | awk '
  NF { s += $1; n++; if (min == "" || $1 < min) min = $1 }
  END { if (n) printf "%.2f mean, %.2f least of %d windows", s / n, min, n; else print "too short to sample" }')
# phase MESSAGE FIELD: FIELD of the last log line saying MESSAGE.
phase() { grep "\"message\":\"$1\"" "$work/log" | tail -1 | grep -o "\"$2\":[0-9]*" | cut -d: -f2; }
printf '%s products from a feed: ready %d ms; CPU %.1f s (user %.1f, system %.1f); %d minor page faults\n' \
  "$size" "$ready" "$(awk -v u="$utime" -v s="$stime" -v hz="$hz" 'BEGIN { print (u + s) / hz }')" \
  "$(awk -v u="$utime" -v hz="$hz" 'BEGIN { print u / hz }')" \
  "$(awk -v s="$stime" -v hz="$hz" 'BEGIN { print s / hz }')" "$minflt"
printf 'cores busy (0.5 s windows): %s\n  %s\n' "$cores" "${busy[*]}"
printf 'phases: catalog built %s ms, then search fed %s ms and built %s ms in all\n' \
  "$(phase "catalog built and indexed" elapsed_ms)" "$(phase "search index phases" fed_ms)" \
  "$(phase "search index phases" built_ms)"
if [ -n "${PERF:-}" ]; then
  echo "samples by thread:"
  perf report -i "$work/perf.data" --no-children --sort comm -q -g none 2>/dev/null \
    | awk 'NF && $1 + 0 >= 0.5' | head -12
  echo "samples by function (by itself):"
  perf report -i "$work/perf.data" --no-children --sort sym -q -g none 2>/dev/null \
    | awk 'NF' | head -25 | cut -c1-150
fi
