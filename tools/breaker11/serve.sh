#!/bin/bash
# Starts a chatd for breaker11's scripts: serve.sh sqlite|pg [port] [extra env...]
# Prints the PID; data in /tmp/breaker11/data-<port> (or $B11_DATA), log in
# /tmp/breaker11/b11-<port>.log, database breaker11_<port> (or $B11_DB).
# tools/hostile/serve.sh does the work; CHATD_BIN overrides the binary
# (default here: the debug build in /var/tmp/target-breaker11).
CHATD_BIN=${CHATD_BIN:-/var/tmp/target-breaker11/debug/chatd} \
HOSTILE_NAME=breaker11 HOSTILE_PORT=19300 HOSTILE_DATA=$B11_DATA HOSTILE_DATA_PREFIX=/tmp/breaker11/data- \
  HOSTILE_LOG_PREFIX=/tmp/breaker11/b11- HOSTILE_DB=$B11_DB HOSTILE_DB_PREFIX=breaker11_ \
  exec bash "$(dirname "$0")/../hostile/serve.sh" "$@"
