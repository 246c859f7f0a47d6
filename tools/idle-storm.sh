#!/usr/bin/env bash
# 100,000 idle WebSocket connections on one chatd node, then a reconnect
# storm after `kill -9` (docs/performance.md, "100,000 connections").
#
#   tools/idle-storm.sh [CONNECTIONS] [SOURCE_ADDRS]
#
# Runs the release build of chatd (embedded SQLite in a fresh data
# directory, so RSS is that of a fresh server) on 127.0.0.1:$PORT and
# `chatd-bench idle` against it with its sockets spread over SOURCE_ADDRS
# (default 127.0.0.2 … 127.0.0.9: about 28,000 ports each). When the
# generator says it holds every connection, the server is killed with
# SIGKILL and started again on the same data directory; the generator times
# its clients' reconnection (each with its own backoff and jitter). Prints
# the generator's JSON, the restarted server's RSS with every client back,
# the kernel's listen-queue drops and the server's refusals.
# Env: CHATD_BIN, BENCH_BIN (release binaries), PORT (default 18480),
# WORK (scratch directory), HOLD (the hold, default 10s), CONCURRENCY (connections
# opened at once, default 64), plus any CHATD_*
# setting passed to the server.
set -euo pipefail
N=${1:-100000}
SRC=${2:-127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9}
TARGET=${CARGO_TARGET_DIR:-target}
CHATD_BIN=${CHATD_BIN:-$TARGET/release/chatd}
BENCH_BIN=${BENCH_BIN:-$TARGET/release/chatd-bench}
PORT=${PORT:-18480}
WORK=${WORK:-$(mktemp -d)}
HOLD=${HOLD:-10s}
ADMIN=idle-storm-admin-token-0123456789abcdef
mkdir -p "$WORK/data"
export CHATD_LISTEN=127.0.0.1:$PORT CHATD_DATA_DIR=$WORK/data CHATD_ADMIN_TOKEN=$ADMIN
export CHATD_MAX_CONNECTIONS=${CHATD_MAX_CONNECTIONS:-$((N + 1000))}
export CHATD_LOG=${CHATD_LOG:-warn}
# One descriptor per connection on each side: as high as the hard limit
# allows (raising the hard limit needs CAP_SYS_RESOURCE); chatd and the
# generator also raise their soft limits to the hard one themselves.
ulimit -n "$(cat /proc/sys/fs/nr_open)" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
echo "open-file limit: soft $(ulimit -Sn), hard $(ulimit -Hn)"
start_server() {
  "$CHATD_BIN" serve >>"$WORK/server.log" 2>&1 &
  echo $! >"$WORK/server.pid"
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && return 0
    sleep 0.05
  done
  echo "server did not start" >&2
  return 1
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
start_server
PID1=$(cat "$WORK/server.pid")
nstat -n >/dev/null 2>&1 || true
"$BENCH_BIN" --url "http://127.0.0.1:$PORT" --server-pid "$PID1" --admin-token "$ADMIN" \
  --source-addrs "$SRC" --duration "$HOLD" --json \
  idle --connections "$N" --per-user 50 --connect-concurrency "${CONCURRENCY:-64}" --storm-wait 10m \
  >"$WORK/bench.json" 2>"$WORK/bench.err" &
BENCH=$!
until grep -q "kill the server now" "$WORK/bench.err" 2>/dev/null; do
  kill -0 "$BENCH" 2>/dev/null || { cat "$WORK/bench.err" >&2; exit 1; }
  sleep 0.5
done
echo "server RSS before the kill: $(rss_kib "$PID1") KiB, fds $(ls /proc/$PID1/fd | wc -l)"
nstat -n >/dev/null 2>&1 || true
KILLED_AT=$(date +%s.%N)
kill -9 "$PID1"
wait "$PID1" 2>/dev/null || true
start_server
PID2=$(cat "$WORK/server.pid")
echo "restarted as $PID2, $(echo "$(date +%s.%N) - $KILLED_AT" | bc) s after the kill"
until grep -q "connected again" "$WORK/bench.err" 2>/dev/null; do
  kill -0 "$BENCH" 2>/dev/null || break
  sleep 0.2
done
sleep 2
echo "restarted server RSS with every client back: $(rss_kib "$PID2") KiB, fds $(ls /proc/$PID2/fd | wc -l)"
wait "$BENCH" || true
echo "kernel, from the kill to the end (the whole machine's counters):"
nstat -z TcpExtListenOverflows TcpExtListenDrops TcpExtTCPReqQFullDrop TcpExtTCPReqQFullDoCookies TcpExtSyncookiesSent TcpAttemptFails 2>/dev/null || true
echo "server refusals (restarted server's metrics):"
curl -s "http://127.0.0.1:$PORT/metrics" | grep -E "^chatd_(http_requests_total|connections_open|sessions_closed_total)" | grep -vE ' 0$' | head -30 || true
echo "accept failures logged: $(grep -ciE "accept failed" "$WORK/server.log" || true)"
cat "$WORK/bench.err"
cat "$WORK/bench.json"
kill "$PID2"
wait "$PID2" 2>/dev/null || true
