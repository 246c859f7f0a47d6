#!/usr/bin/env bash
# The server's memory while it exports a large user (protocol.md §19,
# GET /v1/users/{userId}/export): docs/performance.md, "Exporting a user of
# 1,000,000 messages".
#
# 1. starts chatd on a scratch SQLite data directory (loopback only) so that
#    it creates its schema, makes channel `room` with `alice`, stops it;
# 2. writes N messages of alice's straight into the database (Python's
#    sqlite3; seqs 2..N+1, ids in time order, `last_seq` to match);
# 3. starts chatd again, samples its VmRSS every 0.5 s while curl reads the
#    whole export at full speed, then once more with a slow reader
#    (curl --limit-rate 2M for 10 s);
# 4. prints the line count, the end line, the time and the RSS figures.
#
# Usage: benches/export_rss.sh [N] [path/to/chatd]   (defaults: 1000000,
# target/release/chatd). Needs python3, curl and bc. Bounded: one export,
# one 10-second slow read, all on 127.0.0.1.
set -euo pipefail

N="${1:-1000000}"
CHATD="${2:-target/release/chatd}"
PORT=18090
DIR="$(mktemp -d)"
ADMIN=bench-admin-token-0123456789abcdef
export CHATD_LISTEN="127.0.0.1:$PORT" CHATD_DATA_DIR="$DIR/data" CHATD_ADMIN_TOKEN="$ADMIN" \
  CHATD_JWT_SECRET=bench-jwt-secret-0123456789abcdef0123 CHATD_LOG=warn
trap 'kill "$PID" 2>/dev/null || true; rm -rf "$DIR"' EXIT

start() {
  "$CHATD" serve >"$DIR/log" 2>&1 &
  PID=$!
  for _ in $(seq 50); do
    curl -sf "localhost:$PORT/healthz" >/dev/null && return
    sleep 0.1
  done
  echo "chatd did not start" >&2
  cat "$DIR/log" >&2
  exit 1
}

start
curl -sf -XPOST -H "Authorization: Bearer $ADMIN" -H 'content-type: application/json' \
  "localhost:$PORT/v1/channels" -d '{"channelId":"room","members":["alice"]}' >/dev/null
kill "$PID"
wait "$PID" 2>/dev/null || true

python3 - "$DIR/data/chatd.db" "$N" <<'EOF'
import sqlite3, sys, time
db, n = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(db)
c.execute("pragma synchronous=off")
base = int(time.time() * 1000) - n
body = "export measurement message number %07d " + "x" * 60
rows = (("01a24ac1-%04x-7000-8000-%012x" % (i >> 48 & 0xffff, i & 0xffffffffffff), "room", i + 1,
         "alice", "seed-%d" % i, body % i, base + i) for i in range(1, n + 1))
c.executemany("insert into messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts) "
              "values (?,?,?,?,?,?,?)", rows)
c.execute("update channels set last_seq = ?, last_ts = ? where channel_id = 'room'", (n + 1, base + n))
c.commit()
EOF

start
sample() {
  while kill -0 "$PID" 2>/dev/null; do
    awk '/VmRSS/ {print $2}' "/proc/$PID/status" >>"$1"
    sleep 0.5
  done
}
echo "RSS idle: $(awk '/VmRSS/ {print $2}' "/proc/$PID/status") kB"
sample "$DIR/rss-fast" &
SAMPLER=$!
t0=$(date +%s.%N)
curl -sf -H "Authorization: Bearer $ADMIN" "localhost:$PORT/v1/users/alice/export" -o "$DIR/out.ndjson"
t1=$(date +%s.%N)
kill "$SAMPLER"
echo "lines: $(wc -l <"$DIR/out.ndjson"), bytes: $(stat -c %s "$DIR/out.ndjson"), last: $(tail -1 "$DIR/out.ndjson")"
echo "seconds: $(echo "$t1 - $t0" | bc)"
echo "RSS peak, full speed: $(sort -n "$DIR/rss-fast" | tail -1) kB"
rm -f "$DIR/out.ndjson"
sample "$DIR/rss-slow" &
SAMPLER=$!
curl -s --limit-rate 2M --max-time 10 -H "Authorization: Bearer $ADMIN" \
  "localhost:$PORT/v1/users/alice/export" -o /dev/null || true
kill "$SAMPLER"
echo "RSS peak, slow reader (2 MB/s, 10 s): $(sort -n "$DIR/rss-slow" | tail -1) kB"
echo "VmHWM: $(awk '/VmHWM/ {print $2}' "/proc/$PID/status") kB"
