#!/bin/bash
# Starts a chatd for a hostile run's scripts; each run's tools/breakerN/serve.sh
# calls it with its own names:
#   HOSTILE_NAME=breakerN serve.sh sqlite|pg [port] [ENV=VALUE...]
# Prints the PID once /healthz answers (else exits 1). The server's admin token is
# $HOSTILE_NAME-admin-token-0123456789, its JWT secret
# $HOSTILE_NAME-jwt-secret-0123456789abcdef0123456789; ENV=VALUE pairs are exported
# to it. Set by the caller:
#   HOSTILE_NAME         the run (required);
#   HOSTILE_PORT         the default port;
#   HOSTILE_DATA         the data dir (default $HOSTILE_DATA_PREFIX<port>);
#   HOSTILE_LOG_PREFIX   the log is $HOSTILE_LOG_PREFIX<port>.log;
#   HOSTILE_DB           pg: the database, created if missing (default $HOSTILE_DB_PREFIX<port>).
# CHATD_BIN overrides the binary (default: the release build in /var/tmp/target-$HOSTILE_NAME).
# An existing data dir is reused (a restart); delete it yourself for a fresh start.
set -e
name=${HOSTILE_NAME:?HOSTILE_NAME=breakerN}
store=${1:-sqlite}; port=${2:-$HOSTILE_PORT}; shift 2 || true
bin=${CHATD_BIN:-/var/tmp/target-$name/release/chatd}
data=${HOSTILE_DATA:-$HOSTILE_DATA_PREFIX$port}
log=$HOSTILE_LOG_PREFIX$port.log
mkdir -p "$data" "$(dirname "$log")"
export CHATD_LISTEN=127.0.0.1:$port CHATD_DATA_DIR=$data \
  CHATD_ADMIN_TOKEN=$name-admin-token-0123456789 \
  CHATD_JWT_SECRET=$name-jwt-secret-0123456789abcdef0123456789 \
  CHATD_LOG=${CHATD_LOG:-info}
if [ "$store" = pg ]; then
  db=${HOSTILE_DB:-$HOSTILE_DB_PREFIX$port}
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db" 2>/dev/null || true
  export CHATD_DATABASE_URL=postgres://postgres@127.0.0.1:5432/$db
fi
for kv in "$@"; do export "$kv"; done
nohup "$bin" serve >>"$log" 2>&1 &
echo $!
for _ in $(seq 1 150); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && exit 0
  sleep 0.2
done
echo "server did not come up" >&2
exit 1
