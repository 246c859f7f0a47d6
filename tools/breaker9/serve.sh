#!/bin/bash
# Starts a chatd for breaker9's scripts: serve.sh sqlite|pg [port] [extra env...]
# Prints the PID; data in /tmp/breaker9/data-<port>, log in /tmp/breaker9/b9-<port>.log.
# CHATD_BIN overrides the binary (default: the release build in the target dir).
# B9_KEEP=1 keeps an existing data dir (a restart); else the data dir is reused too
# (delete it yourself for a fresh start).
set -e
store=${1:-sqlite}; port=${2:-18900}; shift 2 || true
bin=${CHATD_BIN:-/var/tmp/target-breaker9/release/chatd}
data=${B9_DATA:-/tmp/breaker9/data-$port}
mkdir -p "$data"
export CHATD_LISTEN=127.0.0.1:$port CHATD_DATA_DIR=$data \
  CHATD_ADMIN_TOKEN=breaker9-admin-token-0123456789 \
  CHATD_JWT_SECRET=breaker9-jwt-secret-0123456789abcdef0123456789 \
  CHATD_LOG=${CHATD_LOG:-info}
if [ "$store" = pg ]; then
  db=${B9_DB:-breaker9_$port}
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db" 2>/dev/null || true
  export CHATD_DATABASE_URL=postgres://postgres@127.0.0.1:5432/$db
fi
for kv in "$@"; do export "$kv"; done
nohup "$bin" serve >>/tmp/breaker9/b9-$port.log 2>&1 &
echo $!
for _ in $(seq 1 150); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && exit 0
  sleep 0.2
done
echo "server did not come up" >&2
exit 1
