#!/bin/bash
# Starts a chatd for breaker13's scripts: serve.sh sqlite|pg [port] [extra env...]
# Prints the PID; data in /var/tmp/breaker13-run/data-<port> (or $B13_DATA), log in
# /var/tmp/breaker13-run/b13-<port>.log, database breaker13_<port> (or $B13_DB).
# tools/hostile/serve.sh does the work; CHATD_BIN overrides the binary
# (default here: the debug build copied to /var/tmp/breaker13-run/chatd).
CHATD_BIN=${CHATD_BIN:-/var/tmp/breaker13-run/chatd} \
HOSTILE_NAME=breaker13 HOSTILE_PORT=18300 HOSTILE_DATA=$B13_DATA HOSTILE_DATA_PREFIX=/var/tmp/breaker13-run/data- \
  HOSTILE_LOG_PREFIX=/var/tmp/breaker13-run/b13- HOSTILE_DB=$B13_DB HOSTILE_DB_PREFIX=breaker13_ \
  exec bash "$(dirname "$0")/../hostile/serve.sh" "$@"
