#!/usr/bin/env bash
# Plain `send` with and without a typing load (issue 17, point 7), with the
# server's work kept apart from the load generators' on the 2-core machine:
# chatd runs alone on CPU 0 (taskset), the generators on CPU 1, the send
# generator at normal priority and the typing load (1,000 members, 50 typing,
# `chatd-bench typing` with no send phases, a process of its own) at nice 19,
# so it takes only the time the send generator leaves on CPU 1. The server
# then pays for typing (fan-out and the socket writes of every TYPING frame)
# out of its own core, as it would on a machine of its own; what the machine
# cannot separate is the kernel's loopback delivery of those frames, part of
# which runs on the sending core.
#
# Usage: benches/typing_isolated.sh [ROUNDS (default 4; even: ABBA)]
# Needs: target/release/chatd and target/release/chatd-bench
#        (cargo build --release -p chatd -p chatd-bench), taskset, curl.
# Env:   DURATION (send phase, default 10s), PORT (default 18614).
# Prints one line per phase (round, with typing or not, sends ACKed/s, TYPING
# frames the server queued per second during the send phase, server CPU), then
# the with/without ratio per round and of the sums.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-4}
DURATION=${DURATION:-10s}
PORT=${PORT:-18614}
URL="http://127.0.0.1:$PORT"
ADMIN="bench-admin-$(date +%s%N)"
DATA=$(mktemp -d)
ulimit -n 20000

CHATD_ADMIN_TOKEN="$ADMIN" CHATD_DATA_DIR="$DATA" CHATD_LISTEN="127.0.0.1:$PORT" CHATD_LOG=warn \
  CHATD_RATE_LIMIT_PER_SEC=0 CHATD_USER_RATE_LIMIT_PER_SEC=0 CHATD_MAX_CONNECTIONS=20000 \
  taskset -c 0 target/release/chatd serve >"$DATA/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$DATA"' EXIT
for _ in $(seq 1 100); do
  curl -fsS "$URL/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
export CHATD_ADMIN_TOKEN="$ADMIN"
B=(target/release/chatd-bench --url "$URL" --server-pid "$SERVER" --json)

typing_queued() {
  curl -fsS "$URL/metrics" | awk '$1 == "chatd_frames_out_total{type=\"TYPING\"}" {print $2; f=1} END {if (!f) print 0}'
}
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }

secs=$(python3 -c "import sys; s=sys.argv[1]; print(float(s[:-1]) if s.endswith('s') else float(s))" "$DURATION")
echo "round typing sends_acked_per_s typing_frames_per_s server_cpu_pct"
with_sum=0
without_sum=0
for round in $(seq 0 $((ROUNDS - 1))); do
  if [ $((round % 2)) -eq 0 ]; then order="0 1"; else order="1 0"; fi
  declare -A rate=()
  for with in $order; do
    typist=""
    if [ "$with" = 1 ]; then
      # long enough for the send phase (2 s warm-up, its duration, its read-back)
      nice -n 19 taskset -c 1 "${B[@]}" --duration "$(python3 -c "print(int($secs) + 30)")s" \
        typing --members 1000 --typers 50 --send-connections 0 >"$DATA/typing-$round.json" &
      typist=$!
      # wait until the typing load runs (the server queues TYPING frames)
      start=$(typing_queued)
      for _ in $(seq 1 300); do
        [ "$(python3 -c "print(int(float('$(typing_queued)') - float('$start') > 20000))")" = 1 ] && break
        sleep 0.1
      done
    fi
    q0=$(typing_queued)
    t0=$(server_ticks)
    taskset -c 1 "${B[@]}" --warmup 2s --duration "$DURATION" --no-verify \
      send --connections 64 --channels 32 --members 2 --in-flight 16 >"$DATA/send.json"
    q1=$(typing_queued)
    t1=$(server_ticks)
    [ -n "$typist" ] && kill "$typist" 2>/dev/null && wait "$typist" 2>/dev/null || true
    line=$(python3 - "$DATA/send.json" "$q0" "$q1" "$t0" "$t1" "$secs" "$(getconf CLK_TCK)" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
q0, q1, t0, t1, secs, hz = map(float, sys.argv[2:])
span = secs + 2  # the warm-up ran the same load
acked = report["acked_per_sec"]
print(f"{acked:.0f} {(q1 - q0) / span:.0f} {100 * (t1 - t0) / hz / span:.0f}")
PY
)
    echo "$round $with $line"
    rate[$with]=${line%% *}
  done
  echo "round $round: with/without $(python3 -c "print(round(${rate[1]} / ${rate[0]}, 3))")"
  with_sum=$((with_sum + ${rate[1]}))
  without_sum=$((without_sum + ${rate[0]}))
  unset rate
done
echo "all rounds: with/without $(python3 -c "print(round($with_sum / $without_sum, 3))") (sums $with_sum / $without_sum sends/s)"
