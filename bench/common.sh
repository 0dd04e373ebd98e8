# Shared by the bench scripts (sourced): start a release mesh on a port and
# measure one route with wrk. Callers set `pids` and their EXIT trap.

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
