#!/usr/bin/env bash
# The database-alone ceiling of a chatd send: pgbench running exactly one send
# per transaction against a scratch database with chatd's schema, from
# migrations/postgres/ (channels with their last seq; messages with
# UNIQUE (channel_id, seq) and UNIQUE (sender_id, client_msg_id)):
#
#   BEGIN;
#   UPDATE channels SET last_seq = last_seq + 1, last_ts = … WHERE channel_id = …
#     RETURNING last_seq;                      -- locks the row, bumps the seq
#   INSERT INTO messages (…) VALUES (uuid v7, channel, seq, sender, key, body, ts);
#   COMMIT;                                    -- one durable commit per send
#
# The channel is picked uniformly among --channels; the sender is the pgbench
# client; the idempotency key is random. Connections use
# synchronous_commit=on, as chatd's do (src/store/mod.rs); fsync and the rest
# are the server's own settings, printed with the results.
#
# chatd figures are compared with this ceiling measured in the same session
# (docs/performance.md): a server that does one transaction per send can at
# best reach it; group commit is how chatd exceeds it.
#
# Usage: benches/pg_ceiling.sh [--channels "1000 1"] [--clients "16 64"]
#          [--duration 10] [--warmup 2] [--body-bytes 100] [--json]
# Connection: the usual libpq variables (PGHOST, PGPORT, PGUSER, PGPASSWORD),
# defaulting to 127.0.0.1:5432 as postgres. The scratch database
# (chatd_pg_ceiling_<pid>) is created, and dropped on exit.
set -euo pipefail

CHANNELS="1000 1"
CLIENTS="16 64"
DURATION=10
WARMUP=2
BODY=100
JSON=0
while [ $# -gt 0 ]; do
  case "$1" in
    --channels) CHANNELS="$2"; shift 2 ;;
    --clients) CLIENTS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --body-bytes) BODY="$2"; shift 2 ;;
    --json) JSON=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "pg_ceiling: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

export PGHOST="${PGHOST:-127.0.0.1}" PGPORT="${PGPORT:-5432}" PGUSER="${PGUSER:-postgres}"
for tool in psql pgbench python3; do
  command -v "$tool" >/dev/null || { echo "pg_ceiling: $tool not found (Debian: postgresql-client)" >&2; exit 2; }
done

DB="chatd_pg_ceiling_$$"
TMP=$(mktemp -d)
cleanup() {
  psql -qX -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
q() { psql -qXAt -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

psql -qX -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $DB" >/dev/null
# chatd's own schema: its PostgreSQL migrations, applied in order.
for migration in "$(dirname "$0")"/../migrations/postgres/*.sql; do
  q -f "$migration"
done
q <<'SQL'
-- chatd's message ids are UUIDv7 (time-ordered, so the primary key index is
-- appended to, not written at random); PostgreSQL 15 has no uuidv7().
CREATE FUNCTION uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
    PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
    FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$;
SQL

# One send per transaction. :channels and :body come from -D.
cat >"$TMP/send.sql" <<'SQL'
\set ch random(1, :channels)
BEGIN;
UPDATE channels SET last_seq = last_seq + 1,
    last_ts = GREATEST(last_ts, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
  WHERE channel_id = 'bench-channel-' || :ch RETURNING last_seq, last_ts \gset
INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts)
  VALUES (uuid_v7(), 'bench-channel-' || :ch, :last_seq, 'bench-user-' || :client_id,
          md5(random()::text || clock_timestamp()::text), repeat('x', :body), :last_ts);
COMMIT;
SQL

SETTINGS=$(PGOPTIONS="-c synchronous_commit=on" q -F= -c "
  SELECT name, current_setting(name) FROM pg_settings
  WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'wal_sync_method', 'full_page_writes',
                 'commit_delay', 'shared_buffers', 'max_wal_size', 'wal_level')
  ORDER BY name")

NPROC=$(nproc)
RESULTS="$TMP/results"
: >"$RESULTS"
for channels in $CHANNELS; do
  for clients in $CLIENTS; do
    # A fresh, equal start for every configuration.
    q -c "TRUNCATE messages" -c "DELETE FROM channels" \
      -c "INSERT INTO channels (channel_id, created_at) SELECT 'bench-channel-' || i, 0 FROM generate_series(1, $channels) i" \
      -c "VACUUM ANALYZE channels" -c "VACUUM ANALYZE messages" -c "CHECKPOINT"
    threads=$((clients < NPROC ? clients : NPROC))
    args=(-n -M prepared -c "$clients" -j "$threads" -f "$TMP/send.sql" -D "channels=$channels" -D "body=$BODY")
    if [ "$WARMUP" -gt 0 ]; then
      PGOPTIONS="-c synchronous_commit=on" pgbench "${args[@]}" -T "$WARMUP" "$DB" >/dev/null 2>&1
    fi
    rm -f "$TMP"/log*
    PGOPTIONS="-c synchronous_commit=on" pgbench "${args[@]}" -T "$DURATION" --log --log-prefix="$TMP/log" "$DB" \
      >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" "$TMP/out" >&2; exit 1; }
    # Per-transaction log lines: client txno latency_us script epoch_s epoch_us.
    cat "$TMP"/log* | python3 -c '
import json, sys
channels, clients, duration = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
out = open(sys.argv[4]).read()
lat = sorted(int(line.split()[2]) for line in sys.stdin if line.strip())
n = len(lat)
pct = lambda q: lat[min(n - 1, int(q * n))] / 1000.0 if n else 0.0
mean = sum(lat) / n / 1000.0 if n else 0.0
sd = (sum((x / 1000.0 - mean) ** 2 for x in lat) / n) ** 0.5 if n else 0.0
failed = 0
for line in out.splitlines():
    if line.startswith("number of failed transactions"):
        failed = int(line.split(":")[1].split()[0])
print(json.dumps({"channels": channels, "clients": clients, "duration_s": duration,
    "transactions": n, "tps": round(n / duration, 1), "failed": failed,
    "latency_ms": {"avg": round(mean, 3), "stddev": round(sd, 3), "p50": pct(0.5),
                   "p90": pct(0.9), "p99": pct(0.99), "max": lat[-1] / 1000.0 if n else 0.0}}))
' "$channels" "$clients" "$DURATION" "$TMP/out" >>"$RESULTS"
  done
done

python3 - "$RESULTS" "$BODY" "$NPROC" "$SETTINGS" "$JSON" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
body, nproc, settings, as_json = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1"
settings = dict(line.split("=", 1) for line in settings.splitlines() if "=" in line)
if as_json:
    print(json.dumps({"workload": "one send per transaction: UPDATE channel RETURNING seq, INSERT message, COMMIT",
                      "body_bytes": body, "nproc": nproc, "postgres": settings, "results": rows}))
    sys.exit(0)
print("pg_ceiling: one send per transaction (UPDATE channel … RETURNING seq; INSERT message; COMMIT)")
print("body %d B, nproc %d, %s" % (body, nproc, ", ".join("%s=%s" % kv for kv in sorted(settings.items()))))
print("%8s %7s %9s %8s | %8s %8s %8s %8s %8s %8s" % ("channels", "clients", "tps", "failed",
      "avg ms", "sd ms", "p50 ms", "p90 ms", "p99 ms", "max ms"))
for r in rows:
    l = r["latency_ms"]
    print("%8d %7d %9.1f %8d | %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f" % (r["channels"], r["clients"], r["tps"],
          r["failed"], l["avg"], l["stddev"], l["p50"], l["p90"], l["p99"], l["max"]))
PY
