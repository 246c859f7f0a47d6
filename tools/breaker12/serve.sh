#!/bin/bash
# Starts a chatd for breaker12's scripts: serve.sh sqlite|pg [port] [extra env...]
# Prints the PID; data in /var/tmp/breaker12-run/data-<port> (or $B12_DATA), log in
# /var/tmp/breaker12-run/b12-<port>.log, database breaker12_<port> (or $B12_DB).
# tools/hostile/serve.sh does the work; CHATD_BIN overrides the binary
# (default here: the debug build in /var/tmp/target-breaker12).
CHATD_BIN=${CHATD_BIN:-/var/tmp/target-breaker12/debug/chatd} \
HOSTILE_NAME=breaker12 HOSTILE_PORT=19400 HOSTILE_DATA=$B12_DATA HOSTILE_DATA_PREFIX=/var/tmp/breaker12-run/data- \
  HOSTILE_LOG_PREFIX=/var/tmp/breaker12-run/b12- HOSTILE_DB=$B12_DB HOSTILE_DB_PREFIX=breaker12_ \
  exec bash "$(dirname "$0")/../hostile/serve.sh" "$@"
