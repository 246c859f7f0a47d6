#!/usr/bin/env bash
# Cluster benchmark (issue #4): the same chatd-bench run against 1, 2 and 3
# chatd nodes on one PostgreSQL database and NATS, with the load generator's
# connections spread over the nodes (--nodes). On one 2-core machine more
# nodes are not faster: the figures show the cost of the NATS hop.
#
# Usage: benches/cluster.sh [extra chatd-bench arguments for the `send` scenario]
# Needs: target/release/chatd and target/release/chatd-bench
#        (cargo build --release -p chatd -p chatd-bench), PostgreSQL on
#        127.0.0.1:5432 (trust), NATS on 127.0.0.1:4222.
# Env:   PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
#        NATS_URL (default nats://127.0.0.1:4222), DURATION (10s), WARMUP (2s),
#        RATE (fixed-rate run, sends/s in all; default 1000).
set -euo pipefail
cd "$(dirname "$0")/.."
PG_ADMIN_URL=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
NATS_URL=${NATS_URL:-nats://127.0.0.1:4222}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
RATE=${RATE:-1000}
BASE=${PG_ADMIN_URL%/*}
export CHATD_ADMIN_TOKEN="cluster-bench-$(date +%s%N)"
export CHATD_JWT_SECRET="cluster-bench-secret-$(date +%s%N)"
PIDS=()
DB=""
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$DB" ] && psql "$PG_ADMIN_URL" -qtAc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null || true
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

for n in 1 2 3; do
  DB="chatd_cluster_bench_$(date +%s%N)"
  psql "$PG_ADMIN_URL" -qtAc "CREATE DATABASE $DB" >/dev/null
  PREFIX="bench$(date +%s%N)"
  URLS=()
  PIDS=()
  for i in $(seq 1 "$n"); do
    port=$(free_port)
    dir=$(mktemp -d)
    nats_env=()
    if [ "$n" -gt 1 ]; then nats_env=(CHATD_NATS_URL="$NATS_URL" CHATD_NATS_SUBJECT_PREFIX="$PREFIX"); fi
    env "${nats_env[@]}" CHATD_DATABASE_URL="$BASE/$DB" CHATD_DATA_DIR="$dir" CHATD_LISTEN="127.0.0.1:$port" \
      CHATD_LOG=warn CHATD_RATE_LIMIT_PER_SEC=0 CHATD_USER_RATE_LIMIT_PER_SEC=0 \
      target/release/chatd serve >"$dir/log" 2>&1 &
    PIDS+=($!)
    URLS+=("http://127.0.0.1:$port")
    for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
  done
  nodes=$(IFS=,; echo "${URLS[*]:1}")
  extra=()
  [ -n "$nodes" ] && extra=(--nodes "$nodes")
  for mode in closed rate; do
    args=(send --connections 64 --channels 100 --members 8)
    [ "$mode" = rate ] && args+=(--rate "$RATE")
    echo "== $n node(s), $mode: chatd-bench ${args[*]}" >&2
    target/release/chatd-bench --url "${URLS[0]}" "${extra[@]}" --warmup "$WARMUP" --duration "$DURATION" --json "${args[@]}" "$@"
  done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$PG_ADMIN_URL" -qtAc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null
  DB=""
done
