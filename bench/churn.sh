#!/usr/bin/env bash
# Replica churn (issue 52): two replicas of every service program (catalog,
# search, cart, orders, customers, content) as separate processes behind a
# gateway, 8 readers and a writer with Idempotency-Keys, while every
# replica is restarted in turn (SIGTERM, started again on its address,
# serving and under load a second before the next). Prints one JSON line:
# reads, failed reads (and per 100,000), writes applied, writes answered
# 503 (each retried with its key and applied once). The test is
# tests/e2e/processes/churn.rs (ignored in the test command: it is a
# benchmark); it fails on any failed read.
# Usage: bench/churn.sh [runs, default 1]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
for _ in $(seq 1 "$runs"); do
  cargo test --locked --quiet --test e2e -- --ignored rolling_restart_of_every_program --nocapture \
    2>/dev/null | grep '^{'
done
